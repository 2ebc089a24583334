#pragma once
// `mpirun -np N fathom search ...`: the ranks of an MPI launch (Open MPI and Boost.MPI from Debian
// packages; built when CMake finds them, FATHOM_HAVE_MPI). Without MPI, or when fathom was not
// started by mpirun (no OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK in the environment), every
// process is rank 0 of 1 and MPI is never initialised.
#include <string>
#include <vector>

namespace fathom::cli {

struct MpiWorld {
    int rank = 0, size = 1;
};

// Initialises MPI on first use when launched by mpirun; rank and size of MPI_COMM_WORLD.
MpiWorld mpi_world();
// Every rank's string at rank 0, in rank order (other ranks get an empty vector). Collective.
std::vector<std::string> mpi_gather(const std::string& mine);
// Ends every rank with `code` (an error on one rank would otherwise leave the others waiting).
[[noreturn]] void mpi_abort(int code);

}  // namespace fathom::cli

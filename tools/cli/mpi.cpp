#include "tools/cli/mpi.h"

#include <cstdlib>
#include <memory>

#ifdef FATHOM_HAVE_MPI
#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>
#endif

namespace fathom::cli {

namespace {

bool launched_by_mpirun() {
    for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
        if (std::getenv(v)) return true;
    return false;
}

#ifdef FATHOM_HAVE_MPI
boost::mpi::communicator* world() {
    static std::unique_ptr<boost::mpi::environment> env;
    static std::unique_ptr<boost::mpi::communicator> comm;
    if (!comm && launched_by_mpirun()) {
        env = std::make_unique<boost::mpi::environment>();
        comm = std::make_unique<boost::mpi::communicator>();
    }
    return comm.get();
}
#endif

}  // namespace

MpiWorld mpi_world() {
#ifdef FATHOM_HAVE_MPI
    if (auto* w = world()) return {w->rank(), w->size()};
#else
    (void)launched_by_mpirun;
#endif
    return {};
}

std::vector<std::string> mpi_gather(const std::string& mine) {
#ifdef FATHOM_HAVE_MPI
    if (auto* w = world(); w && w->size() > 1) {
        std::vector<std::string> all;
        boost::mpi::gather(*w, mine, all, 0);
        return all;
    }
#endif
    return {mine};
}

void mpi_abort(int code) {
#ifdef FATHOM_HAVE_MPI
    if (auto* w = world()) w->abort(code);
#endif
    std::exit(code);
}

}  // namespace fathom::cli

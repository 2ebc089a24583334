# Common Vidur CLI args for the peer-comparison workload (sourced by run_vidur.sh)
QPS=${QPS:-15}
VIDUR_ARGS=(
  --seed 42
  --cluster_config_num_replicas 4
  --replica_config_model_name meta-llama/Llama-2-70b-hf
  --replica_config_device h100
  --replica_config_network_device h100_dgx
  --replica_config_tensor_parallel_size 4
  --replica_config_num_pipeline_stages 1
  --global_scheduler_config_type round_robin
  --replica_scheduler_config_type sarathi
  --sarathi_scheduler_config_chunk_size 512
  --sarathi_scheduler_config_batch_size_cap 128
  --request_generator_config_type synthetic
  --synthetic_request_generator_config_num_requests 10000
  --length_generator_config_type fixed
  --fixed_request_length_generator_config_prefill_tokens 1024
  --fixed_request_length_generator_config_decode_tokens 256
  --interval_generator_config_type poisson
  --poisson_request_interval_generator_config_qps $QPS
  --execution_time_predictor_config_type random_forrest
  --no-metrics_config_write_metrics
  --no-metrics_config_write_json_trace
  --no-metrics_config_enable_chrome_trace
  --no-metrics_config_save_table_to_wandb
  --no-metrics_config_store_plots
  --no-metrics_config_store_operation_metrics
  --no-metrics_config_store_token_completion_metrics
  --no-metrics_config_store_request_metrics
  --no-metrics_config_store_batch_metrics
  --no-metrics_config_store_utilization_metrics
  --no-metrics_config_keep_individual_batch_metrics
  --metrics_config_output_dir /work/peers/vidur/simulator_output
  --metrics_config_cache_dir /work/peers/vidur/cache
)

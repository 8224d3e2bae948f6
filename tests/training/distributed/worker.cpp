// One rank of the distributed-training tests (tests/training/test_distributed.cpp starts them as
// separate processes): trains the tiny task with the rank taken from RANK/WORLD_SIZE/
// MASTER_ADDR/MASTER_PORT and writes its final parameters, so that the test can compare
// the ranks with each other and with a single process.
//
// usage: nmt_distributed_worker TASK_DIR MODEL_DIR_NAME PARAMETERS_OUT MAX_STEPS TIMEOUT_SECONDS [LEARNING_RATE]
// (a learning rate of its own makes this rank's config differ from the others')
#include <ATen/Parallel.h>
#include <torch/serialize.h>

#include <iostream>

#include "nmt/base/process_setup.h"
#include "support/tiny_task.h"

int main(int argc, char** argv) {
  nmt::set_up_process();  // before any LibTorch operation: the NMT_CPU_ISA cap reaches oneDNN
  if (argc != 6 && argc != 7) {
    std::cerr << "usage: " << argv[0] << " TASK_DIR MODEL_DIR_NAME PARAMETERS_OUT MAX_STEPS TIMEOUT_SECONDS [LEARNING_RATE]\n";
    return 2;
  }
  try {
    at::set_num_threads(1);
    auto config = nmt::test::deterministic_tiny_config();
    config.train.max_steps = std::stoll(argv[4]);
    if (argc == 7) config.train.learning_rate = std::stod(argv[6]);
    auto options = nmt::test::tiny_trainer_options(std::string(argv[1]), config, argv[2]);
    options.distributed = nmt::distributed_options_from_environment();
    options.distributed.timeout_seconds = std::stod(argv[5]);
    const auto result = nmt::train(options);
    torch::save(result.model->parameters(), argv[3]);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "worker: error: " << e.what() << std::endl;
    return 1;
  }
}

// jitcache-worker: one compile process of jitcached's pool (worker_main.h).
#include "server/build/worker_main.h"

int main(int argc, char** argv) { return jitcache::RunWorker(argc, argv); }

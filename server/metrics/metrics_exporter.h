#ifndef JITCACHE_SERVER_METRICS_METRICS_EXPORTER_H_
#define JITCACHE_SERVER_METRICS_METRICS_EXPORTER_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "jitcache/v1/jitcache.pb.h"
#include "server/metrics/latency_histogram.h"

namespace prometheus {
class Exposer;
}

namespace jitcache {

class MetricsCollector;

// What is exported, as the service keeps it. The exporter knows nothing of
// the service: the daemon wires the two.
struct MetricsSource {
  // Every counter and gauge, as an administrator's `jitcache stats` sees
  // them; called on each scrape.
  std::function<v1::StatsResponse()> stats;
  // Each outlives the exporter.
  const LatencyHistogram* hit_latency = nullptr;
  const LatencyHistogram* miss_latency = nullptr;
  const LatencyHistogram* compile_time = nullptr;
};

// Serves the daemon's counters, gauges and latency histograms as Prometheus
// text on http://ADDRESS/metrics. Everything is read from the source at
// scrape time: nothing is added to the request path beyond the counters
// `jitcache stats` already keeps.
// Thread-safety: created and destroyed by one thread; scrapes run on the
// HTTP server's own threads.
class MetricsExporter {
 public:
  // `address` is HOST:PORT (port 0: any free port).
  static absl::StatusOr<std::unique_ptr<MetricsExporter>> Start(
      const std::string& address, MetricsSource source);
  ~MetricsExporter();

  // The port it listens on.
  int port() const { return port_; }

 private:
  MetricsExporter() = default;
  std::shared_ptr<MetricsCollector> collector_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  int port_ = 0;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_METRICS_METRICS_EXPORTER_H_

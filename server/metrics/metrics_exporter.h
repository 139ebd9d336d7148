#ifndef JITCACHE_SERVER_METRICS_METRICS_EXPORTER_H_
#define JITCACHE_SERVER_METRICS_METRICS_EXPORTER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace prometheus {
class Exposer;
}

namespace jitcache {

class JitCacheService;
class MetricsCollector;

// Serves the daemon's counters, gauges and latency histograms as Prometheus
// text on http://ADDRESS/metrics. Everything is read from the service at
// scrape time: nothing is added to the request path beyond the counters
// `jitcache stats` already keeps.
// Thread-safety: created and destroyed by one thread; scrapes run on the
// HTTP server's own threads.
class MetricsExporter {
 public:
  // `address` is HOST:PORT (port 0: any free port). `service` outlives
  // the exporter.
  static absl::StatusOr<std::unique_ptr<MetricsExporter>> Start(
      const std::string& address, const JitCacheService* service);
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

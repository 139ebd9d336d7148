#include "server/metrics/metrics_exporter.h"

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <prometheus/metric_family.h>

#include <exception>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/metrics/latency_histogram.h"

namespace jitcache {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

namespace {

MetricFamily Family(std::string name, std::string help, MetricType type) {
  MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = type;
  return f;
}

void AddValue(MetricFamily* f, double value,
              std::vector<ClientMetric::Label> labels = {}) {
  ClientMetric& m = f->metric.emplace_back();
  m.label = std::move(labels);
  if (f->type == MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
}

MetricFamily Histogram(std::string name, std::string help,
                       const LatencyHistogram& histogram) {
  MetricFamily f =
      Family(std::move(name), std::move(help), MetricType::Histogram);
  const LatencyHistogram::Snapshot s = histogram.Read();
  ClientMetric& m = f.metric.emplace_back();
  m.histogram.sample_count = s.count;
  m.histogram.sample_sum = s.sum_seconds;
  uint64_t cumulative = 0;
  for (size_t i = 0; i < LatencyHistogram::kUpperBoundsSeconds.size(); ++i) {
    cumulative += s.counts[i];
    m.histogram.bucket.push_back(
        {cumulative, LatencyHistogram::kUpperBoundsSeconds[i]});
  }
  // The +Inf bucket is the sample count; the serializer adds it.
  return f;
}

}  // namespace

class MetricsCollector : public prometheus::Collectable {
 public:
  explicit MetricsCollector(MetricsSource source)
      : source_(std::move(source)) {}

  std::vector<MetricFamily> Collect() const override {
    const v1::StatsResponse s = source_.stats();
    std::vector<MetricFamily> out;
    auto add = [&](const char* name, const char* help, MetricType type,
                   double value) {
      out.push_back(Family(absl::StrCat("jitcache_", name), help, type));
      AddValue(&out.back(), value);
    };
    const auto kCounter = MetricType::Counter;
    const auto kGauge = MetricType::Gauge;
    add("requests_total", "Compile and link requests received", kCounter,
        s.requests());
    add("hits_total", "Requests answered from the store", kCounter, s.hits());
    add("misses_total", "Requests that led a compile", kCounter, s.misses());
    add("joins_total", "Requests answered by another request's compile",
        kCounter, s.joins());
    add("compiles_total", "Compiles and links that ran", kCounter,
        s.compiles());
    add("compile_errors_total", "Answers with outcome COMPILE_ERROR", kCounter,
        s.compile_errors());
    add("link_errors_total", "Answers with outcome LINK_ERROR", kCounter,
        s.link_errors());
    add("compile_seconds_saved_total",
        "Compile time of the requests answered by hits and joins", kCounter,
        s.compile_seconds_saved());
    out.push_back(Family("jitcache_rejected_total",
                         "Requests answered with an error, by reason",
                         kCounter));
    for (const auto& [reason, count] : s.rejected()) {
      AddValue(&out.back(), count, {{"reason", reason}});
    }
    out.push_back(Family("jitcache_compiler_failures_total",
                         "Compiles and links that cost their worker, by why",
                         kCounter));
    AddValue(&out.back(), s.compiler_crashes(), {{"reason", "crash"}});
    AddValue(&out.back(), s.compiler_memory_limited(),
             {{"reason", "memory_limit"}});
    AddValue(&out.back(), s.compiler_time_limited(),
             {{"reason", "time_limit"}});
    add("compile_workers_started_total", "Compile worker processes started",
        kCounter, s.compile_workers_started());
    add("remote_hits_total", "Local misses the cluster tier answered", kCounter,
        s.remote_hits());
    add("remote_misses_total", "Local misses the cluster tier lacked", kCounter,
        s.remote_misses());
    add("remote_errors_total", "Cluster tier operations that failed", kCounter,
        s.remote_errors());
    add("remote_corrupt_total", "Damaged cluster tier values, never served",
        kCounter, s.remote_corrupt());
    add("remote_leases_waited_total",
        "Misses that waited for another node's compile", kCounter,
        s.remote_leases_waited());
    add("remote_bytes_up_total", "Bytes written to the cluster tier", kCounter,
        s.remote_bytes_up());
    add("remote_bytes_down_total", "Bytes read from the cluster tier", kCounter,
        s.remote_bytes_down());
    add("queued_compiles", "Compiles waiting for a worker", kGauge, s.queued());
    add("running_compiles", "Compiles running", kGauge, s.running());
    add("waiting_requests", "Requests waiting for a compile", kGauge,
        s.waiting());
    add("store_bytes", "Bytes of the store's files", kGauge, s.store_bytes());
    add("store_max_bytes", "The cap on store_bytes (0: none)", kGauge,
        s.store_max_bytes());
    add("store_live_bytes", "Uncompressed bytes of entries and objects", kGauge,
        s.store_live_bytes());
    add("store_entries", "Entries (compile and link results) in the store",
        kGauge, s.store_entries());
    add("store_objects", "Objects in the store", kGauge, s.store_objects());
    add("store_evicted_entries_total", "Entries evicted or cleared", kCounter,
        s.store_evicted_entries());
    add("store_evicted_bytes_total", "Live bytes of the entries evicted",
        kCounter, s.store_evicted_bytes());
    add("store_eviction_runs_total", "Eviction passes the cap triggered",
        kCounter, s.store_eviction_runs());
    add("store_corrupt_removed_total",
        "Entries found corrupt on read and removed", kCounter,
        s.store_corrupt_removed());
    add("store_write_failures_total",
        "Store writes that failed (a full disk); their answers were not kept",
        kCounter, s.store_write_failures());

    struct PerUser {
      const char* name;
      const char* help;
      MetricType type;
      double (*value)(const v1::UserStats&);
    };
    static constexpr PerUser kPerUser[] = {
        {"user_requests_total", "Requests, by user", MetricType::Counter,
         [](const v1::UserStats& u) { return double(u.requests()); }},
        {"user_hits_total", "Hits, by user", MetricType::Counter,
         [](const v1::UserStats& u) { return double(u.hits()); }},
        {"user_misses_total", "Compiles led, by user", MetricType::Counter,
         [](const v1::UserStats& u) { return double(u.misses()); }},
        {"user_rejected_total", "Error answers, by user", MetricType::Counter,
         [](const v1::UserStats& u) { return double(u.rejected()); }},
        {"user_compile_seconds_total", "Compile time of the compiles led",
         MetricType::Counter,
         [](const v1::UserStats& u) { return u.compile_seconds(); }},
        {"user_queued_compiles", "Compiles waiting, by user", MetricType::Gauge,
         [](const v1::UserStats& u) { return double(u.queued()); }},
    };
    for (const PerUser& p : kPerUser) {
      out.push_back(Family(absl::StrCat("jitcache_", p.name), p.help, p.type));
      for (const v1::UserStats& u : s.users()) {
        AddValue(&out.back(), p.value(u),
                 {{"uid", absl::StrCat(u.uid())}, {"user", u.name()}});
      }
    }

    out.push_back(Histogram("jitcache_hit_latency_seconds",
                            "Request to answer, for hits",
                            *source_.hit_latency));
    out.push_back(
        Histogram("jitcache_miss_latency_seconds",
                  "Request to answer, for requests that waited for a compile",
                  *source_.miss_latency));
    out.push_back(Histogram("jitcache_compile_duration_seconds",
                            "Time of each compile or link that ran",
                            *source_.compile_time));
    return out;
  }

 private:
  const MetricsSource source_;
};

absl::StatusOr<std::unique_ptr<MetricsExporter>> MetricsExporter::Start(
    const std::string& address, MetricsSource source) {
  auto exporter = std::unique_ptr<MetricsExporter>(new MetricsExporter());
  exporter->collector_ = std::make_shared<MetricsCollector>(std::move(source));
  // The HTTP server reports a bind failure by throwing; nothing else here
  // does.
  try {
    exporter->exposer_ = std::make_unique<prometheus::Exposer>(address, 2);
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat(
        "--metrics_address=", address, ": cannot listen (", e.what(), ")"));
  }
  exporter->exposer_->RegisterCollectable(exporter->collector_);
  const std::vector<int> ports = exporter->exposer_->GetListeningPorts();
  if (!ports.empty()) exporter->port_ = ports.front();
  return exporter;
}

MetricsExporter::~MetricsExporter() = default;

}  // namespace jitcache

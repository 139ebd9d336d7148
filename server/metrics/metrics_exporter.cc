#include "server/metrics/metrics_exporter.h"

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <prometheus/metric_family.h>

#include <exception>
#include <vector>

#include "absl/strings/str_cat.h"
#include "jitcache/v1/stat_options.pb.h"
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

bool IsStat(const google::protobuf::FieldDescriptor& field) {
  using google::protobuf::FieldDescriptor;
  const auto type = field.cpp_type();
  return !field.is_repeated() && field.options().HasExtension(v1::stat_help) &&
         (type == FieldDescriptor::CPPTYPE_UINT64 ||
          type == FieldDescriptor::CPPTYPE_UINT32 ||
          type == FieldDescriptor::CPPTYPE_DOUBLE);
}

double NumberOf(const google::protobuf::Message& message,
                const google::protobuf::FieldDescriptor& field) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Reflection& r = *message.GetReflection();
  switch (field.cpp_type()) {
    case FieldDescriptor::CPPTYPE_UINT64:
      return static_cast<double>(r.GetUInt64(message, &field));
    case FieldDescriptor::CPPTYPE_UINT32:
      return r.GetUInt32(message, &field);
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return r.GetDouble(message, &field);
    default:
      return 0;
  }
}

// jitcache_PREFIXNAME, with _total for a counter (Prometheus' convention).
MetricFamily FamilyOf(const google::protobuf::FieldDescriptor& field,
                      absl::string_view prefix) {
  const bool gauge = field.options().GetExtension(v1::stat_gauge);
  return Family(
      absl::StrCat("jitcache_", prefix, field.name(), gauge ? "" : "_total"),
      field.options().GetExtension(v1::stat_help),
      gauge ? MetricType::Gauge : MetricType::Counter);
}

}  // namespace

class MetricsCollector : public prometheus::Collectable {
 public:
  explicit MetricsCollector(MetricsSource source)
      : source_(std::move(source)) {}

  std::vector<MetricFamily> Collect() const override {
    const v1::StatsResponse s = source_.stats();
    std::vector<MetricFamily> out;
    // Every field of StatsResponse, under its own name, with the help and
    // kind the proto gives it: nothing to keep in step by hand.
    const google::protobuf::Descriptor& d = *s.GetDescriptor();
    for (int i = 0; i < d.field_count(); ++i) {
      const google::protobuf::FieldDescriptor& field = *d.field(i);
      if (field.is_map()) {
        // rejected: one family, the map's key as its label.
        out.push_back(FamilyOf(field, ""));
        for (const auto& [reason, count] : s.rejected()) {
          AddValue(&out.back(), count, {{"reason", reason}});
        }
      } else if (field.is_repeated()) {
        // users: a family per numeric field of UserStats, by uid and name.
        const google::protobuf::Descriptor& u = *v1::UserStats::descriptor();
        for (int j = 0; j < u.field_count(); ++j) {
          const google::protobuf::FieldDescriptor& user_field = *u.field(j);
          if (!IsStat(user_field)) continue;
          out.push_back(FamilyOf(user_field, "user_"));
          for (const v1::UserStats& user : s.users()) {
            AddValue(
                &out.back(), NumberOf(user, user_field),
                {{"uid", absl::StrCat(user.uid())}, {"user", user.name()}});
          }
        }
      } else if (IsStat(field)) {
        out.push_back(FamilyOf(field, ""));
        AddValue(&out.back(), NumberOf(s, field));
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

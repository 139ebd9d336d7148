#ifndef JITCACHE_SERVER_SYSTEMD_SERVICE_NOTIFIER_H_
#define JITCACHE_SERVER_SYSTEMD_SERVICE_NOTIFIER_H_

#include <functional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace jitcache {

// Tells the service manager how the daemon is doing (sd_notify: READY
// with a STATUS line, STOPPING) and, when it asks for a watchdog (WatchdogSec=,
// seen as WATCHDOG_USEC), pings it at a third of that interval, but only while
// `healthy` answers true: a daemon wedged on its store stops pinging and is
// restarted. Without NOTIFY_SOCKET every call does nothing.
// Thread-safety: all methods from any thread; the destructor stops the
// watchdog thread.
class ServiceNotifier {
 public:
  explicit ServiceNotifier(std::function<bool()> healthy);
  ~ServiceNotifier();
  ServiceNotifier(const ServiceNotifier&) = delete;
  ServiceNotifier& operator=(const ServiceNotifier&) = delete;

  void Ready(absl::string_view status);
  void Stopping();

 private:
  void Watch();

  const std::function<bool()> healthy_;
  absl::Duration interval_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_SYSTEMD_SERVICE_NOTIFIER_H_

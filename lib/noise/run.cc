#include "noise/run.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "common/error.h"
#include "common/interrupt.h"
#include "common/json_read.h"
#include "common/measure_clock.h"
#include "common/text_escape.h"
#include "engine/progress.h"

namespace rdmabench::noise {

namespace {

using nlohmann::json;

bool setAffinity(pid_t tid, const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus)
    if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
  return sched_setaffinity(tid, sizeof set, &set) == 0;
}

// A barrier over the store: the last rank to arrive opens it.
void storeBarrier(rendezvous::Store& s, const std::string& name, int worldSize, int64_t timeoutMs) {
  if (s.add("noise/" + name + "/count", 1) == worldSize) s.set("noise/" + name + "/go", "1");
  s.get("noise/" + name + "/go", timeoutMs);
}

// The /proc sampler of a node's local rank 0: start, every sampleSec, end.
class Sampler {
 public:
  Sampler(const std::string& root, double sampleSec, std::vector<int> cpus)
      : reader_(root), sampleSec_(sampleSec), cpus_(std::move(cpus)) {
    timed();  // the start
  }
  void startThread() {
    if (sampleSec_ <= 0) return;
    thread_ = std::thread([this] {
      pthread_setname_np(pthread_self(), "rdmabench-noise");
      setAffinity(0, cpus_);  // anywhere this process may run, not the rank's core only
      std::unique_lock<std::mutex> lock(mutex_);
      const auto period = std::chrono::duration<double>(sampleSec_);
      while (!stop_) {
        if (cv_.wait_for(lock, period, [this] { return stop_; })) break;
        lock.unlock();
        timed();
        lock.lock();
      }
    });
  }
  void stopThread() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  ~Sampler() { stopThread(); }
  AttributionResult finish(const std::vector<int>& cpus, const std::set<int>& exclude) {
    const int64_t t0 = measureNs();
    AttributionResult r = reader_.finish(cpus, exclude);
    spentNs_ += measureNs() - t0;
    ++count_;
    return r;
  }
  double msPerSample() const { return count_ ? static_cast<double>(spentNs_) / 1e6 / count_ : 0; }

 private:
  void timed() {
    const int64_t t0 = measureNs();
    reader_.sample();
    spentNs_ += measureNs() - t0;
    ++count_;
  }
  AttributionReader reader_;
  double sampleSec_;
  std::vector<int> cpus_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
  int64_t spentNs_ = 0;
  int count_ = 0;
};

}  // namespace

std::vector<int> allowedCpus() {
  std::vector<int> out;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

namespace {

// Pins the calling thread (one rank per core: the local rank's CPU of `allowed`, cycling when
// there are more ranks than CPUs; a launcher's one-CPU binding is kept) and says how.
// SystemError when the binding fails.
std::string pinRank(const NoiseConfig& c, const launch::RankInfo& info,
                    const std::vector<int>& allowed) {
  if (!c.pin) return "not pinned (--no-pin)";
  if (allowed.size() == 1) return "pinned by the launcher (one CPU per rank)";
  if (allowed.empty()) return "";
  const int cpu = allowed[static_cast<size_t>(info.localRank) % allowed.size()];
  if (!setAffinity(0, {cpu}))
    throw SystemError(fmt::format("noise: sched_setaffinity to cpu {}", cpu), errno);
  return info.localRanks > static_cast<int>(allowed.size())
             ? fmt::format("pinned one rank per core, oversubscribed: {} ranks on {} CPUs",
                           info.localRanks, allowed.size())
             : std::string("pinned one rank per core");
}

// The node's reader (local rank 0): waits for every local rank, takes the end sample and
// publishes the node's attribution ("noise/attr/HOST") and each CPU's sources
// ("noise/attr/HOST/CPU").
void publishAttribution(const NoiseRunOptions& o, const launch::RankInfo& info,
                        rendezvous::Store& store, Sampler& sampler) {
  // The reader waits for every rank of its node, then takes the end sample.
  std::set<int> exclude = o.ownPids;
  std::vector<int> cpus;
  for (int lr = 0; lr < info.localRanks; ++lr) {
    const std::string v = store.get(fmt::format("noise/local/{}/{}", info.host, lr), o.timeoutMs);
    int pid = 0, cpu = -1;
    if (std::sscanf(v.c_str(), "%d %d", &pid, &cpu) != 2)
      throw ProtocolError(fmt::format("noise: malformed local rank entry '{}'", escapeForLog(v)));
    exclude.insert(pid);
    if (std::find(cpus.begin(), cpus.end(), cpu) == cpus.end()) cpus.push_back(cpu);
  }
  AttributionResult a = sampler.finish(cpus, exclude);
  NodeAttribution node;
  node.host = info.host;
  node.seconds = a.seconds;
  node.samples = a.samples;
  node.readerMsPerSample = sampler.msPerSample();
  node.unseen = a.unseen;
  store.set(fmt::format("noise/attr/{}", info.host), node.toJson().dump());
  for (const CpuSources& cs : a.cpus) {
    NodeAttribution one;
    one.host = info.host;
    one.cpus.push_back(cs);
    store.set(fmt::format("noise/attr/{}/{}", info.host, cs.cpu), one.toJson().dump());
  }
}

// The report of the results `all`, with every node's attribution from the store.
NoiseReport reportOf(const NoiseRunOptions& o, std::vector<RankResult> all,
                     rendezvous::Store& store) {
  std::vector<NodeAttribution> nodes;
  for (const RankResult& x : all) {
    auto it = std::find_if(nodes.begin(), nodes.end(),
                           [&](const NodeAttribution& a) { return a.host == x.host; });
    if (it == nodes.end()) {
      const std::string what = fmt::format("noise attribution of {}", x.host);
      nodes.push_back(NodeAttribution::fromJson(
          parseUntrustedJson(store.get(fmt::format("noise/attr/{}", x.host), o.timeoutMs), what, 8,
                             1u << 20),
          what));
      it = nodes.end() - 1;
    }
    if (std::any_of(it->cpus.begin(), it->cpus.end(),
                    [&](const CpuSources& s) { return s.cpu == x.cpu; }))
      continue;
    const std::string what = fmt::format("noise sources of {} cpu {}", x.host, x.cpu);
    NodeAttribution one = NodeAttribution::fromJson(
        parseUntrustedJson(store.get(fmt::format("noise/attr/{}/{}", x.host, x.cpu), o.timeoutMs),
                           what, 8, 1u << 20),
        what);
    for (auto& cs : one.cpus)
      it->cpus.push_back(std::move(cs));
  }
  return buildReport(o.config, std::move(all), std::move(nodes));
}

// Rank 0: every rank's result and every node's attribution from the store, as the report.
// ProtocolError for a malformed or mislabelled entry; TimeoutError for a missing one.
NoiseReport gatherReport(const NoiseRunOptions& o, int n, rendezvous::Store& store) {
  const NoiseConfig& c = o.config;
  std::vector<RankResult> all;
  for (int r = 0; r < n; ++r) {
    const std::string what = fmt::format("noise result of rank {}", r);
    json j = parseUntrustedJson(store.get(fmt::format("noise/result/{}", r), o.timeoutMs), what, 8,
                                1u << 20);
    all.push_back(RankResult::fromJson(j, what, c.predictTimesUs.size()));
    if (all.back().rank != r)
      throw ProtocolError(fmt::format("{}: names rank {}", what, all.back().rank));
  }
  return reportOf(o, std::move(all), store);
}

// Rank 0 after a failure while gathering: the results the store holds (each read with a short
// wait; a rank that died has none) as a report marked failed, or nullopt when none is there.
std::optional<NoiseReport> salvageReport(const NoiseRunOptions& o, int n,
                                         rendezvous::Store& store) {
  NoiseRunOptions quick = o;
  // Ranks alive finish their measurement at about the same time (one start, one duration):
  // 2 s for each result to arrive; a dead rank costs that wait once.
  quick.timeoutMs = std::min<int64_t>(o.timeoutMs, 2000);
  // By the rank each result names: after the failure a get may read an answer owed to an earlier
  // one (TcpStoreClient::request), which is then kept as that rank's and the key read again.
  std::map<int, RankResult> byRank;
  for (int r = 0; r < n; ++r) {
    // A get answers with the failure notifications still queued on the store connection (each
    // read once: the dead rank, then the ranks that failed because of it) before the value: a
    // PeerError is such a notice, and the next try reads the key itself.
    for (int attempt = 0; attempt < 8 && !byRank.count(r); ++attempt) {
      try {
        const std::string what = fmt::format("noise result of rank {}", r);
        json j = parseUntrustedJson(store.get(fmt::format("noise/result/{}", r), quick.timeoutMs),
                                    what, 8, 1u << 20);
        RankResult got = RankResult::fromJson(j, what, o.config.predictTimesUs.size());
        const int named = got.rank;
        if (named < 0 || named >= n || byRank.count(named)) break;
        byRank.emplace(named, std::move(got));
      } catch (const PeerError&) {
        continue;
      } catch (const std::exception&) {
        break;
      }
    }
  }
  std::vector<RankResult> got;
  for (auto& [rank, result] : byRank)
    got.push_back(std::move(result));
  if (got.empty()) return std::nullopt;
  NoiseReport report;
  try {
    report = reportOf(quick, got, store);
  } catch (const std::exception&) {
    report = buildReport(o.config, std::move(got), {});  // without the attribution
  }
  report.failed = true;
  return report;
}

}  // namespace

std::optional<NoiseReport> runNoiseRank(const NoiseRunOptions& o, const launch::RankInfo& info,
                                        rendezvous::Store& store,
                                        std::optional<NoiseReport>* partial) {
  const NoiseConfig& c = o.config;
  const int me = info.rank, n = info.worldSize;
  const std::vector<int> allowed = allowedCpus();
  RankResult res;
  res.rank = me;
  res.host = info.host;
  res.pid = static_cast<int>(getpid());
  res.pinning = pinRank(c, info, allowed);
  res.cpu = sched_getcpu();
  res.medianStepNs = medianClockStepNs();
  res.thresholdNs = c.thresholdUs > 0 ? static_cast<int64_t>(c.thresholdUs * 1e3)
                                      : defaultThresholdNs(res.medianStepNs);
  std::unique_ptr<Sampler> sampler;
  if (info.localRank == 0) sampler = std::make_unique<Sampler>(o.procRoot, c.sampleSec, allowed);
  storeBarrier(store, "start", n, o.timeoutMs);
  engine::testHold("measure", me, "the noise measurement");  // tests: a fault while measuring
  if (sampler) sampler->startThread();
  const int64_t durationNs = static_cast<int64_t>(c.durationSec * 1e9);
  DetourTrace trace = runDetourLoop(durationNs, res.thresholdNs, res.medianStepNs);
  if (c.fwqUs > 0 && !trace.interrupted) {
    FwqTrace f = runFwq(c.fwqUs, durationNs);
    res.fwq = summarizeFwq(f);
    trace.interrupted = f.interrupted;
  }
  if (sampler) sampler->stopThread();
  throwIfInterrupted("the noise measurement");
  res.iterations = trace.iterations;
  res.stats = summarize(trace);
  res.stored = trace.detours.size();
  res.interrupted = trace.interrupted;
  for (const Detour& d : trace.detours)
    res.lengths.add(d.lengthNs);
  for (double t : c.predictTimesUs) {
    LogHistogram h;
    addDelays(trace, static_cast<int64_t>(t * 1e3), kModelStarts, h);
    res.delays.push_back(std::move(h));
  }
  trace = DetourTrace{};  // free the trace before the report
  std::optional<NoiseReport> report;
  try {
    store.set(fmt::format("noise/result/{}", me), res.toJson().dump());
    store.set(fmt::format("noise/local/{}/{}", info.host, info.localRank),
              fmt::format("{} {}", res.pid, res.cpu));
    if (sampler) publishAttribution(o, info, store, *sampler);
    if (me == 0) report = gatherReport(o, n, store);
  } catch (const std::exception&) {
    // A set that read a failure notice was still sent (the server holds its key): salvage reads
    // what is there, this rank's own result included.
    if (me == 0 && partial) *partial = salvageReport(o, n, store);
    throw;
  }
  // Everyone stays until rank 0 has read every result.
  storeBarrier(store, "end", n, o.timeoutMs);
  return report;
}

}  // namespace rdmabench::noise

#include "check/noise_step.h"

#include <cstdlib>
#include <exception>
#include <mutex>
#include <sstream>
#include <thread>

#include "noise/report.h"
#include "noise/run.h"
#include "rendezvous/store.h"

namespace rdmabench::check {

NoiseStep runNoiseStep(double seconds, const std::string& host) {
  const std::vector<int> cpus = noise::allowedCpus();
  const int n = static_cast<int>(std::max<size_t>(1, cpus.size()));
  noise::NoiseRunOptions o;
  o.config.durationSec = seconds;
  o.config.sampleSec = 0;  // start and end only: the run is short
  o.timeoutMs = static_cast<int64_t>(seconds * 1000) + 10'000;
  if (const char* root = std::getenv("RDMABENCH_NOISE_PROC_ROOT"); root && *root) o.procRoot = root;
  rendezvous::MemoryStore store;
  std::optional<noise::NoiseReport> report;
  std::exception_ptr failure;
  std::mutex mutex;
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      launch::RankInfo info;
      info.rank = info.localRank = r;
      info.worldSize = info.localRanks = n;
      info.host = host;
      info.source = "single";
      try {
        auto rep = noise::runNoiseRank(o, info, store);
        std::lock_guard<std::mutex> lock(mutex);
        if (rep) report = std::move(rep);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!failure) failure = std::current_exception();
      }
    });
  for (auto& t : threads)
    t.join();
  if (failure) std::rethrow_exception(failure);
  NoiseStep s;
  s.seconds = seconds;
  if (!report) return s;
  s.meanStolenPct = report->job.stolenPct;
  for (const noise::RankResult& r : report->ranks) {
    CoreNoise c;
    c.cpu = r.cpu;
    c.stolenPct = r.stats.stolenPct;
    c.detoursPerSec = r.stats.perSecond;
    c.maxUs = r.stats.maxUs;
    if (const noise::CpuSources* src = noise::sourcesOf(*report, r))
      for (const noise::NoiseSource& x : src->top)
        c.sources.push_back(x.text);
    s.cores.push_back(std::move(c));
  }
  s.findings = noise::noiseFindings(*report);
  std::ostringstream doc;
  noise::writeNoise(doc, "json", *report);
  s.report = nlohmann::json::parse(doc.str(), nullptr, false);
  return s;
}

}  // namespace rdmabench::check

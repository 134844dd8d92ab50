#include "check/noise_step.h"

#include <cstdlib>
#include <exception>
#include <mutex>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "common/error.h"
#include "common/json_read.h"
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

nlohmann::json toJson(const NoiseStep& n) {
  nlohmann::json cores = nlohmann::json::array();
  for (const CoreNoise& c : n.cores)
    cores.push_back({{"cpu", c.cpu},
                     {"stolen_pct", c.stolenPct},
                     {"detours_per_s", c.detoursPerSec},
                     {"max_us", c.maxUs},
                     {"sources", c.sources}});
  return {{"seconds", n.seconds},
          {"mean_stolen_pct", n.meanStolenPct},
          {"cores", cores},
          {"findings", n.findings},
          {"report", n.report}};
}

namespace {

std::vector<std::string> strings(const nlohmann::json& j, std::string_view key,
                                 std::string_view what) {
  std::vector<std::string> out;
  if (const nlohmann::json* a = jsonArray(j, key, what, 1u << 16))
    for (const nlohmann::json& x : *a) {
      if (!x.is_string()) throw ProtocolError(fmt::format("{}: {}: not a string", what, key));
      out.push_back(x.get<std::string>());
    }
  return out;
}

}  // namespace

NoiseStep noiseStepFromJson(const nlohmann::json& j) {
  const std::string what = "check noise step";
  if (!j.is_object()) throw ProtocolError(what + ": not an object");
  NoiseStep n;
  n.seconds = jsonDouble(j, "seconds", what, 0, 0, 1e6);
  n.meanStolenPct = jsonDouble(j, "mean_stolen_pct", what, 0, 0, 100);
  if (const nlohmann::json* cores = jsonArray(j, "cores", what, 1u << 16))
    for (const nlohmann::json& x : *cores) {
      if (!x.is_object()) throw ProtocolError(what + ": a core is not an object");
      CoreNoise c;
      c.cpu = static_cast<int>(jsonInt(x, "cpu", what, -1, -1, 1 << 20));
      c.stolenPct = jsonDouble(x, "stolen_pct", what, 0, 0, 100);
      c.detoursPerSec = jsonDouble(x, "detours_per_s", what, 0, 0, 1e12);
      c.maxUs = jsonDouble(x, "max_us", what, 0, 0, 1e15);
      c.sources = strings(x, "sources", what);
      n.cores.push_back(std::move(c));
    }
  n.findings = strings(j, "findings", what);
  if (const nlohmann::json* r = jsonFind(j, "report", what)) n.report = *r;
  return n;
}

}  // namespace rdmabench::check

// connectStore (launch/launch.h): the rendezvous store a rank uses, after detect(): a file
// store, a memory store for one rank, the TCP store (rank 0 hosting it, or a standalone one), or
// the TCP store whose address and token rank 0 publishes through PMIx.
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/log.h"
#include "common/token.h"
#include "launch/ifname.h"
#include "launch/launch.h"
#include "launch/limits.h"

namespace rdmabench::launch {

namespace {

// PMIx wire-up (connectStore, docs/rendezvous.md "PMIx"): rank 0's store address through one
// PMIx fence, then the TCP store as with every other launcher.
std::unique_ptr<rendezvous::Store> connectPmixStore(
    const RankInfo& info, int64_t timeoutMs,
    std::unique_ptr<rendezvous::TcpStoreServer>& serverOut) {
  using nlohmann::json;
  std::string published;
  if (info.rank == 0) {
    ensureDescriptors(
        storeServerDescriptors(static_cast<uint64_t>(info.worldSize)),
        fmt::format("rank 0 hosting the rendezvous store of {} ranks", info.worldSize));
    // Only this job's processes can read the token (PMIx serves the namespace's own ranks).
    const std::string token = info.token.empty() ? randomToken() : info.token;
    serverOut = std::make_unique<rendezvous::TcpStoreServer>("", 0, info.runId,
                                                             rendezvous::StoreLimits{}, token);
    serverOut->setVerbose(false);
    serverOut->startThread();
    published = json{
        {"addr", selectAddress(localInterfaces(), info.ifname)},
        {"port", serverOut->port()},
        {"token",
         token}}.dump();
  }
  const std::string got = rendezvous::pmixShareFromRank(
      "rdmabench.store", published, 0, "rank 0's rendezvous store address", timeoutMs);
  json j = json::parse(got, nullptr, false);
  if (!j.is_object() || !j.contains("addr") || !j["addr"].is_string() || !j.contains("port") ||
      !j["port"].is_number_unsigned() || j["port"].get<uint64_t>() > 65535 ||
      !j.contains("token") || !j["token"].is_string())
    throw ProtocolError(fmt::format("PMIx: malformed rendezvous address from rank 0: {:.80}", got));
  const std::string host = j["addr"].get<std::string>();
  const auto port = static_cast<uint16_t>(j["port"].get<uint64_t>());
  rendezvous::JoinInfo join{info.runId, info.rank, info.worldSize, info.host,
                            j["token"].get<std::string>()};
  auto client = std::make_unique<rendezvous::TcpStoreClient>(host, port, join, timeoutMs);
  client->setVia("pmix " + info.pmixNamespace);
  return client;
}

}  // namespace

std::unique_ptr<rendezvous::Store> connectStore(
    const RankInfo& info, int64_t timeoutMs,
    std::unique_ptr<rendezvous::TcpStoreServer>& serverOut) {
  if (info.source == "pmix") return connectPmixStore(info, timeoutMs, serverOut);
  if (!info.fileStore.empty())
    return std::make_unique<rendezvous::FileStore>(info.fileStore, info.runId, info.rank,
                                                   info.host);
  if (info.worldSize == 1 && info.rendezvousHost.empty())
    return std::make_unique<rendezvous::MemoryStore>();
  std::string host = info.rendezvousHost;
  uint16_t port = info.rendezvousPort ? info.rendezvousPort : kDefaultRendezvousPort;
  // Under Slurm without a token of the user's: the job's secret, which only the user can read.
  const std::string token = info.slurmSecret ? slurmJobToken() : info.token;
  if (info.hostsServer) {
    ensureDescriptors(
        storeServerDescriptors(static_cast<uint64_t>(info.worldSize)),
        fmt::format("rank 0 hosting the rendezvous store of {} ranks", info.worldSize));
    serverOut = std::make_unique<rendezvous::TcpStoreServer>("", port, info.runId,
                                                             rendezvous::StoreLimits{}, token);
    serverOut->setVerbose(false);
    serverOut->setRunDescription(info.runDescription);
    serverOut->setTellLateRanksOfFailures(true);  // it goes away soon after rank 0 fails
    serverOut->startThread();
    if (token.empty() && info.worldSize > 1)  // --token '': detect() refuses no token at all
      log::warning(fmt::format(
          "rank 0's rendezvous store on port {} takes no token (--token ''): anyone who reaches "
          "the port can join the run, read every rank's address and inject host names and results",
          serverOut->port()));
    if (host.empty()) host = "127.0.0.1";
  }
  if (host.empty())
    throw UsageError(
        fmt::format("rank {}: no rendezvous address (give --rendezvous HOST:PORT)", info.rank));
  rendezvous::JoinInfo join{info.runId, info.rank, info.worldSize, info.host, token};
  join.description = info.runDescription;
  return std::make_unique<rendezvous::TcpStoreClient>(host, port, join, timeoutMs);
}

}  // namespace rdmabench::launch

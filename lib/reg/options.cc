#include "reg/options.h"

#include <boost/program_options.hpp>

#include <fstream>

#include <fmt/format.h>

#include "cli/command_options.h"
#include "cli/options.h"
#include "common/error.h"
#include "common/text_escape.h"
#include "common/units.h"

namespace rdmabench::reg {

namespace po = boost::program_options;

namespace {

cli::OptionGroups regOptionGroups() {
  po::options_description general(
      "Usage: rdmabench reg [options]\nThe cost of memory registration: for each size, a "
      "buffer is registered and deregistered with the device -n times, each call timed "
      "(ibv_reg_mr / ibv_dereg_mr on verbs, fi_mr_reg / fi_close on libfabric), reported in us "
      "per call and GB/s registered (docs/reg.md). One process, no peer.\n\nMeasurement");
  general.add_options()("help,h", "show this help")(
      "transport,t", po::value<std::string>(),
      "verbs | ofi | socket (default: verbs when a device has an active port, else socket, "
      "whose registration is bookkeeping only)")("device,d", po::value<std::string>(),
                                                 "RDMA device (verbs) or libfabric domain (ofi)")(
      "ib-port", po::value<std::string>(), "verbs port number (default 1)")(
      "provider", po::value<std::string>(), "libfabric provider, e.g. verbs;ofi_rxm (ofi)")(
      "msg-sizes,m", po::value<std::string>(),
      "MIN:MAX bytes, powers of two from MIN (default 4K:64M; MAX at most the memory "
      "available)")("iterations,n", po::value<std::string>(),
                    "timed register+deregister pairs per size (default: 256 MiB worth, 5..100)")(
      "warmup", po::value<std::string>(), "untimed pairs first, 0..1000 (default 1)")(
      "pages", po::value<std::string>(),
      "small | huge | thp: the base page size, explicit huge pages (MAP_HUGETLB, from "
      "vm.nr_hugepages) or transparent huge pages (MADV_HUGEPAGE) (default small)")(
      "mr-cache", po::bool_switch(),
      "ofi: keep libfabric's MR cache on (default off, FI_MR_CACHE_MAX_COUNT=0: a repeated "
      "registration of one buffer would hit the cache, not the provider)")(
      "no-prefault", po::bool_switch(),
      "do not touch the pages before timing (the registration then faults them in)");
  po::options_description output("Output");
  output.add_options()("format,f", po::value<std::string>(), "table | json (default table)")(
      "output,o", po::value<std::string>(), "write the report to FILE, atomically");
  return cli::OptionGroups{general, output};
}

uint64_t memAvailableBytes() {
  std::ifstream in("/proc/meminfo");
  std::string name, unit;
  uint64_t kb = 0;
  while (in >> name >> kb >> unit)
    if (name == "MemAvailable:") return kb * 1024;
  return 0;
}

}  // namespace

RegCommand parseRegCommand(const std::vector<std::string>& args) {
  RegCommand cmd;
  po::variables_map vm = cli::parseCommandOptions("reg", regOptionGroups(), args, cmd);
  if (cmd.help) return cmd;
  auto str = [&](const char* k) { return vm[k].as<std::string>(); };
  RegParams& p = cmd.params;
  const std::string sizesText = vm.count("msg-sizes") ? str("msg-sizes") : "4K:64M";
  const SizeRange r = parseSizeRange(sizesText, "-m/--msg-sizes", 4096, 64ull << 20);
  if (r.min == 0)
    throw UsageError(fmt::format("-m/--msg-sizes {}: 0 bytes cannot be registered (minimum 1)",
                                 escapeForLog(sizesText, 40)));
  if (const uint64_t avail = memAvailableBytes(); avail && r.max > avail)
    throw UsageError(fmt::format(
        "-m/--msg-sizes {}: {} bytes is above the memory available ({} bytes, MemAvailable in "
        "/proc/meminfo)",
        escapeForLog(sizesText, 40), r.max, avail));
  p.sizes = sizeSweep(r.min, r.max);
  if (vm.count("iterations"))
    p.iterations = cli::parseUnsigned(str("iterations"), "-n/--iterations", 1, 1'000'000);
  if (vm.count("warmup")) p.warmup = cli::parseUnsigned(str("warmup"), "--warmup", 0, 1000);
  if (vm.count("pages")) {
    const std::string pages = str("pages");
    if (pages == "small")
      p.pages = Pages::kSmall;
    else if (pages == "huge")
      p.pages = Pages::kHuge;
    else if (pages == "thp")
      p.pages = Pages::kThp;
    else
      throw UsageError(
          fmt::format("--pages {}: unknown (valid: small, huge, thp)", escapeForLog(pages, 40)));
  }
  p.prefault = !vm["no-prefault"].as<bool>();
  cmd.mrCache = vm["mr-cache"].as<bool>();
  if (vm.count("device")) cmd.device.device = str("device");
  if (vm.count("ib-port"))
    cmd.device.ibPort = static_cast<int>(cli::parseUnsigned(str("ib-port"), "--ib-port", 1, 255));
  if (vm.count("provider")) {
    cmd.device.provider = str("provider");
    if (cmd.device.provider.empty())
      throw UsageError(
          "--provider '': empty provider string (an unset shell variable?); omit it "
          "for libfabric's default");
  }
  cmd.transport = cli::chooseTransport(vm, cmd.transportNote);
  if (cmd.mrCache && cmd.transport != "ofi")
    throw UsageError(
        fmt::format("--mr-cache: only for -t ofi; -t {} has no registration cache", cmd.transport));
  cli::parseFormatAndOutput(vm, "reg", {"table", "json"}, cmd.format, cmd.outputPath);
  return cmd;
}

}  // namespace rdmabench::reg

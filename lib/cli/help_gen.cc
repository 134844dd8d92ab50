#include "cli/help_gen.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

namespace rdmabench::cli {

namespace po = boost::program_options;

namespace {

// A caption split as the parsers write it: "Usage: rdmabench CMD ...\nprose\n\nTitle".
struct Caption {
  std::string usage;               // "rdmabench lat [HOST] [options]" or ""
  std::vector<std::string> prose;  // the lines between usage and title
  std::string title;               // "Test", "Options", ...
};

// Boost keeps a group's caption private; operator<< prints it first, then ":\n" and the
// options, each line starting "  -".
std::string captionOf(const po::options_description& group) {
  std::ostringstream os;
  os << group;
  const std::string text = os.str();
  size_t end = text.find(":\n  -");
  return end == std::string::npos ? text : text.substr(0, end);
}

Caption splitCaption(const po::options_description& group) {
  const std::string caption = captionOf(group);
  Caption c;
  std::vector<std::string> lines;
  std::istringstream in(caption);
  for (std::string l; std::getline(in, l);)
    lines.push_back(l);
  if (lines.empty()) return c;
  if (lines.front().rfind("Usage: ", 0) != 0) {
    c.title = caption;
    return c;
  }
  c.usage = lines.front().substr(7);
  c.title = lines.size() > 1 ? lines.back() : "";
  for (size_t i = 1; i + 1 < lines.size(); ++i)
    if (!lines[i].empty()) c.prose.push_back(lines[i]);
  return c;
}

std::string joinedProse(const Caption& c) {
  std::string s;
  for (const auto& l : c.prose)
    s += (s.empty() ? "" : " ") + l;
  return s;
}

bool isChoiceChar(char ch) {
  return std::islower(static_cast<unsigned char>(ch)) ||
         std::isdigit(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.';
}

// The first "a | b | c" run of lower-case words in `text` (at least two words).
std::vector<std::string> parseChoices(const std::string& text) {
  size_t pos = 0;
  while ((pos = text.find(" | ", pos)) != std::string::npos) {
    // The word before the first bar.
    size_t start = pos;
    while (start > 0 && isChoiceChar(text[start - 1]))
      --start;
    if (start == pos || (start > 0 && !std::isspace(static_cast<unsigned char>(text[start - 1])) &&
                         text[start - 1] != ':' && text[start - 1] != '(')) {
      pos += 3;
      continue;
    }
    std::vector<std::string> words{text.substr(start, pos - start)};
    size_t at = pos;
    while (text.compare(at, 3, " | ") == 0) {
      size_t b = at + 3, e = b;
      while (e < text.size() && isChoiceChar(text[e]))
        ++e;
      if (e == b) break;
      words.push_back(text.substr(b, e - b));
      at = e;
    }
    if (words.size() >= 2) return words;
    pos += 3;
  }
  return {};
}

// Value names of the options whose description lists no short choice: by long name.
const std::map<std::string, std::string>& valueNames() {
  static const std::map<std::string, std::string> m = {
      {"size", "SIZE"},
      {"lat-size", "SIZE"},
      {"bw-size", "SIZE"},
      {"agg-size", "SIZE"},
      {"sizes", "SIZE"},
      {"max-bytes", "SIZE"},
      {"max-value", "SIZE"},
      {"conn-quota", "SIZE"},
      {"total-quota", "SIZE"},
      {"max-input", "SIZE"},
      {"msg-sizes", "MIN:MAX"},
      {"iters", "N"},
      {"warmup", "N"},
      {"window", "N"},
      {"qp", "N"},
      {"cq-mod", "N"},
      {"tx-depth", "N"},
      {"rx-depth", "N"},
      {"bw-iters", "N"},
      {"np", "N"},
      {"rank", "N"},
      {"world-size", "N"},
      {"ib-port", "N"},
      {"max-connections", "N"},
      {"seed", "N"},
      {"duration", "SEC"},
      {"timeout", "SEC"},
      {"connect-timeout", "SEC"},
      {"max-time", "SEC"},
      {"max-timeout", "SEC"},
      {"max-wait", "SEC"},
      {"idle-timeout", "SEC"},
      {"phase-time", "SEC"},
      {"sample", "SEC"},
      {"threshold", "US"},
      {"fwq", "US"},
      {"predict-time", "US"},
      {"predict-ranks", "N"},
      {"port", "PORT"},
      {"token", "TOKEN"},
      {"bind", "ADDR"},
      {"peer", "HOST[:PORT]"},
      {"skip", "STEP"},
      {"device", "NAME"},
      {"remote-device", "NAME"},
      {"domain", "NAME"},
      {"ifname", "SPEC"},
      {"provider", "PROV"},
      {"compare", "LIST"},
      {"cpu", "LIST"},
      {"output", "FILE"},
      {"plot", "FILE"},
      {"script", "FILE"},
      {"baseline", "FILE"},
      {"file-store", "DIR"},
      {"gid-index", "N|auto"},
      {"inline", "N|auto"},
      {"mtu", "BYTES"},
      {"rendezvous", "ADDR"},
      {"run-id", "ID"},
      {"outlier-k", "K"},
      {"victims", "F"},
      {"test", "TEST"},
      {"title", "TEXT"},
      {"cpu-mhz", "MHZ"},
      {"numa", "auto|off|N"},
      {"algo", "ALGO"},
      {"dtype", "TYPE"},
      {"format", "FMT"},
  };
  return m;
}

std::string upper(std::string s) {
  for (char& ch : s)
    ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

// "-s, --size SIZE", "--bidir", "-e, --use-event [on|off]".
std::string spelled(const OptionDoc& o) {
  std::string s = o.shortName.empty() ? o.longName : o.shortName + ", " + o.longName;
  if (!o.valueName.empty()) s += o.optionalValue ? " [" + o.valueName + "]" : " " + o.valueName;
  return s;
}

// The trailing "(default ...)" of a description, split off: {meaning, default}.
std::pair<std::string, std::string> splitDefault(const std::string& d) {
  if (d.empty() || d.back() != ')') return {d, ""};
  int depth = 0;
  for (size_t i = d.size(); i-- > 0;) {
    if (d[i] == ')') ++depth;
    if (d[i] == '(' && --depth == 0) {
      std::string inner = d.substr(i + 1, d.size() - i - 2);
      if (inner.rfind("default", 0) != 0) return {d, ""};
      inner = inner.substr(7);
      size_t b = inner.find_first_not_of(": ");
      inner = b == std::string::npos ? "" : inner.substr(b);
      std::string meaning = d.substr(0, i);
      while (!meaning.empty() && meaning.back() == ' ')
        meaning.pop_back();
      return {meaning, inner};
    }
  }
  return {d, ""};
}

std::vector<std::string> wrap(const std::string& text, size_t width) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  for (std::string w; in >> w;) {
    if (!line.empty() && line.size() + 1 + w.size() > width) {
      out.push_back(line);
      line.clear();
    }
    line += (line.empty() ? "" : " ") + w;
  }
  if (!line.empty()) out.push_back(line);
  return out;
}

// roff: backslashes escaped, a leading '.' or '\'' neutralised.
std::string roff(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '\\')
      out += "\\e";
    else
      out += ch;
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
  return out;
}

// roff for an option name: dashes as \- so they copy and search as ASCII hyphens.
std::string roffDashes(const std::string& s) {
  std::string out;
  for (char ch : s)
    out += ch == '-' ? std::string("\\-") : std::string(1, ch);
  return out;
}

std::string markdownCell(const std::string& s) {
  std::string out;
  for (char ch : s)
    out += ch == '|' ? std::string("\\|") : std::string(1, ch);
  return out;
}

}  // namespace

std::string joinWords(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& x : v)
    s += (s.empty() ? "" : sep) + x;
  return s;
}

std::vector<OptionDoc> optionDocs(const po::options_description& group) {
  std::vector<OptionDoc> out;
  for (const auto& o : group.options()) {
    if (o->description().empty()) continue;  // hidden (positional) options
    OptionDoc d;
    const std::string name = o->format_name();  // "-s [ --size ]" or "--size"
    if (name.rfind("--", 0) == 0) {
      d.longName = name;
    } else {
      d.shortName = name.substr(0, 2);
      size_t b = name.find("[ "), e = name.find(" ]");
      if (b != std::string::npos && e != std::string::npos)
        d.longName = name.substr(b + 2, e - b - 2);
    }
    d.description = o->description();
    d.choices = parseChoices(d.description);
    const auto sem = o->semantic();
    if (sem->max_tokens() > 0) {
      d.optionalValue = sem->min_tokens() == 0;
      std::string n = sem->name();  // "arg", "arg (=x)", "[=arg(=on)]" or a value_name
      if (n.rfind("[=", 0) == 0) n = n.substr(2);
      n = n.substr(0, n.find_first_of(" ([]"));
      const std::string key = d.longName.size() > 2 ? d.longName.substr(2) : d.shortName;
      if (n != "arg" && !n.empty()) {
        d.valueName = n;
      } else if (auto it = valueNames().find(key); it != valueNames().end()) {
        d.valueName = it->second;
      } else if (!d.choices.empty() && joinWords(d.choices, "|").size() <= 24) {
        d.valueName = joinWords(d.choices, "|");
      } else {
        d.valueName = upper(key.substr(0, key.find('-')));
      }
    }
    out.push_back(std::move(d));
  }
  return out;
}

std::string renderHelp(const OptionGroups& groups, unsigned width) {
  std::string out;
  for (size_t g = 0; g < groups.size(); ++g) {
    const Caption c = splitCaption(groups[g]);
    if (!c.usage.empty()) {
      out += "Usage: " + c.usage + "\n";
      for (const auto& l : c.prose)
        out += l + "\n";
      out += "\n";
    } else if (g > 0) {
      out += "\n";
    }
    out += c.title + ":\n";
    const std::vector<OptionDoc> opts = optionDocs(groups[g]);
    size_t col = 0;
    for (const auto& o : opts)
      col = std::max(col, spelled(o).size());
    col = std::min<size_t>(col, 30) + 4;  // 2 indent + name + 2 spaces
    for (const auto& o : opts) {
      std::string head = "  " + spelled(o);
      std::vector<std::string> lines = wrap(o.description, width > col + 20 ? width - col : 40);
      if (head.size() + 2 > col) {
        out += head + "\n";
        head.clear();
      }
      for (const auto& l : lines) {
        head.resize(col, ' ');
        out += head + l + "\n";
        head.clear();
      }
    }
  }
  return out;
}

std::string renderUsage(const std::vector<CommandDoc>& commands, std::string_view extra) {
  std::string out =
      "Usage: rdmabench <command> [options]   (rdmabench <command> --help for its options)\n\n"
      "Commands:\n";
  for (const auto& c : commands) {
    std::string head = c.name + (c.args.empty() ? "" : " " + c.args);
    out += fmt::format("  {:<14} {}\n", head, c.summary);
  }
  out += extra;
  return out;
}

std::string renderMan(const std::vector<CommandDoc>& commands, std::string_view version) {
  std::string o;
  o += fmt::format(".TH RDMABENCH 1 \"\" \"rdmabench {}\" \"User Commands\"\n", version);
  o += ".SH NAME\nrdmabench \\- interconnect benchmarks without MPI: latency, bandwidth, "
       "collectives, fabric maps\n";
  o += ".SH SYNOPSIS\n.B rdmabench\n.I command\n.RI [ options ]\n.br\n.B rdmabench\n"
       ".I command\n.B \\-\\-help\n.br\n.B rdmabench help\n.RI [ command ]\n.br\n"
       ".B rdmabench\n.BR \\-V \" | \" \\-\\-version\n";
  o += ".SH DESCRIPTION\n"
       ".B rdmabench\n"
       "measures HPC interconnects without MPI: point-to-point latency and bandwidth over "
       "libibverbs RC queue pairs, libfabric providers or TCP sockets (the tests of perftest, "
       "OSU and qperf), collectives over N ranks launched by Slurm, mpirun, PMIx or its own "
       "\\-\\-np (the tests of OSU and IMB), all-pairs fabric maps, congestion impact after "
       "GPCNeT, and it lines up the results of OSU, IMB and perftest runs with its own.\n"
       ".PP\nThe commands:\n";
  for (const auto& c : commands) {
    o += ".TP\n.B " + roffDashes(c.name) + (c.args.empty() ? "" : " " + roff(c.args)) + "\n" +
         roff(c.summary) + "\n";
  }
  o += ".SH COMMANDS\n";
  for (const auto& c : commands) {
    const OptionGroups groups = c.options ? c.options() : OptionGroups{};
    o += ".SS \"rdmabench " + c.name + "\"\n";
    Caption first = groups.empty() ? Caption{} : splitCaption(groups.front());
    o += ".B " + roffDashes(first.usage.empty() ? "rdmabench " + c.name : first.usage) + "\n.PP\n";
    o += roff(first.prose.empty() ? c.summary : joinedProse(first)) + "\n";
    for (const auto& g : groups) {
      const std::vector<OptionDoc> opts = optionDocs(g);
      if (opts.empty()) continue;
      o += ".PP\n.I " + roff(splitCaption(g).title) + "\n";
      for (const auto& d : opts) {
        o += ".TP\n.B " +
             roffDashes(d.shortName.empty() ? d.longName : d.shortName + ", " + d.longName);
        if (!d.valueName.empty())
          o += d.optionalValue ? " \\fR[\\fI" + roffDashes(d.valueName) + "\\fR]"
                               : " \\fI" + roffDashes(d.valueName) + "\\fR";
        o.append("\n").append(roff(d.description)).append("\n");  // GCC 12 -Wrestrict: PR105329
      }
    }
  }
  o += ".SH EXIT STATUS\n"
       ".TP\n.B 0\nsuccess\n"
       ".TP\n.B 1\nfailure: transport, system call, protocol, the peer's own error; also "
       "outliers with \\-\\-fail\\-on\\-outlier and wrong allreduce results with \\-\\-check\n"
       ".TP\n.B 2\nusage: a bad option or value, a limit refused up front (here or by the "
       "server)\n"
       ".TP\n.B 3\ntimeout: this side's or the peer's\n"
       ".TP\n.B 4\ninterrupted (Ctrl\\-C, SIGTERM)\n"
       ".PP\nErrors are one line on standard error naming the option, the value and the "
       "limit, or the phase and the peer.\n";
  o += ".SH ENVIRONMENT\n"
       ".TP\n.B RDMABENCH_TOKEN\naccess token of the server and of the rendezvous store "
       "(instead of \\-\\-token, which shows in ps)\n"
       ".TP\n.B RDMABENCH_IFNAME\nthe interfaces the ranks use, as NCCL_SOCKET_IFNAME "
       "(instead of \\-\\-ifname)\n"
       ".TP\n.B RDMABENCH_SHARP_LIBRARY\npath of libsharp_coll.so for \\-\\-algo sharp\n"
       ".TP\n.B SLURM_PROCID\\fR, \\fBSLURM_NTASKS\\fR, \\fBPMIX_RANK\\fR, "
       "\\fBOMPI_COMM_WORLD_RANK\\fR, \\fBPMI_RANK\n"
       "read by the N\\-rank commands to find their rank when a launcher started them\n";
  o += ".SH EXAMPLES\n"
       ".TP\nrdmabench server\n(node A) serve tests on control port 18515\n"
       ".TP\nrdmabench lat nodeA \\-t verbs \\-a\n(node B) ping\\-pong latency, every power of "
       "two up to 4M\n"
       ".TP\nrdmabench bw nodeA \\-\\-op write \\-f perftest\nRDMA write bandwidth in "
       "ib_write_bw's layout\n"
       ".TP\nsrun \\-N 4 \\-\\-ntasks\\-per\\-node 1 rdmabench pairs \\-\\-fail\\-on\\-outlier "
       "\\-\\-plot map.png\nfabric acceptance: every pair of nodes, slow nodes and links flagged\n"
       ".TP\nrdmabench allreduce \\-\\-np 8 \\-s 8,16\n8 and 16 B allreduce over 8 local ranks\n"
       ".TP\nrdmabench compare osu_latency.txt rdmabench.json\nMPI overhead per message size\n"
       ".PP\nSlurm batch scripts for these questions are installed with the documentation "
       "(examples/slurm).\n";
  o += ".SH SEE ALSO\n"
       ".BR ib_send_lat (1),\n.BR ib_write_bw (1),\n.BR fi_info (1),\n.BR fi_pingpong (1),\n"
       ".BR qperf (1),\n.BR sockperf (1),\n.BR srun (1),\n.BR sbatch (1)\n"
       ".PP\nOSU Micro-Benchmarks (osu_latency, osu_bw, osu_allreduce), Intel MPI Benchmarks "
       "(IMB\\-MPI1), GPCNeT; the project's docs/cli.md, docs/collectives.md and "
       "docs/compare.md.\n";
  return o;
}

std::string renderMarkdown(const std::vector<CommandDoc>& commands) {
  std::string out;
  std::map<std::string, std::string> seen;  // a group's table -> first command that had it
  for (const auto& c : commands) {
    if (!c.options) continue;
    const OptionGroups groups = c.options();
    if (groups.empty()) continue;
    out += "<!-- BEGIN GENERATED: " + c.name + " -->\n";
    const Caption first = splitCaption(groups.front());
    if (!first.usage.empty()) out += "`" + first.usage + "`: " + joinedProse(first) + "\n";
    for (const auto& g : groups) {
      const std::vector<OptionDoc> opts = optionDocs(g);
      if (opts.empty()) continue;
      const std::string title = splitCaption(g).title;
      std::string table = "| option | meaning | default |\n|---|---|---|\n";
      for (const auto& d : opts) {
        auto [meaning, def] = splitDefault(d.description);
        table += "| `" + markdownCell(spelled(d)) + "` | " + markdownCell(meaning) + " | " +
                 markdownCell(def) + " |\n";
      }
      auto [it, fresh] = seen.emplace(title + "\n" + table, c.name);
      if (!fresh)
        out += "\n" + title + ": as for `" + it->second + "`.\n";
      else
        out += "\n" + title + ":\n\n" + table;
    }
    out += "<!-- END GENERATED: " + c.name + " -->\n";
  }
  return out;
}

}  // namespace rdmabench::cli

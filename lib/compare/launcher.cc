// Launcher prefixes on captured output lines (docs/compare.md, "Launcher prefixes"):
//   mpirun --tag-output (Open MPI 4)        "[1,0]<stdout>:text"
//   mpirun --output tag (Open MPI 5, PRRTE) "[prterun-host-123@1,0]<stdout>: text"
//   mpirun --timestamp-output               "Mon Nov 30 12:00:00 2026<stdout>:text", with
//                                           --tag-output too "...2026[1,0]<stdout>:text"
//   srun --label (Slurm)                    "0: text", " 3: text" (padded to the widest rank)
//   mpiexec -prepend-rank (MPICH hydra), mpirun -l (Intel MPI)   "[0] text"
//   pdsh / clush                            "node01: text" (host name with a letter)

#include <cctype>

#include "compare/read_detail.h"

namespace rdmabench::compare::detail {

namespace {

bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

// Digits at `s[i..]` as a rank; advances i. nullopt when none or more than 9.
std::optional<uint64_t> digits(std::string_view s, size_t& i) {
  size_t start = i;
  uint64_t v = 0;
  while (i < s.size() && isDigit(s[i]) && i - start < 9)
    v = v * 10 + static_cast<uint64_t>(s[i++] - '0');
  if (i == start || (i < s.size() && isDigit(s[i]))) return std::nullopt;
  return v;
}

// "<stdout>:" / "<stderr>:" / "<stddiag>:" at s[i..]; advances i past the colon.
bool streamTag(std::string_view s, size_t& i, std::string& stream) {
  for (const char* name : {"stdout", "stderr", "stddiag"}) {
    std::string tag = std::string("<") + name + ">:";
    if (s.substr(i, tag.size()) == tag) {
      stream = name;
      i += tag.size();
      return true;
    }
  }
  return false;
}

// "[job,rank]" at s[i..] (job: anything but ',' and ']', at most 64 bytes); advances i.
bool jobRank(std::string_view s, size_t& i, std::optional<uint64_t>& rank) {
  if (i >= s.size() || s[i] != '[') return false;
  size_t j = i + 1;
  while (j < s.size() && j - i <= 65 && s[j] != ',' && s[j] != ']' && s[j] != '[')
    ++j;
  if (j >= s.size() || s[j] != ',' || j == i + 1) return false;
  ++j;
  auto r = digits(s, j);
  if (!r || j >= s.size() || s[j] != ']') return false;
  rank = r;
  i = j + 1;
  // Open MPI 5's detailed tag adds "[host:pid]".
  if (i < s.size() && s[i] == '[') {
    size_t k = s.find(']', i);
    if (k != std::string_view::npos && k - i <= 128) i = k + 1;
  }
  return true;
}

bool timestampChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == ' ' || c == ':' || c == '.' ||
         c == '-' || c == '/' || c == '+' || c == ',';
}

// pdsh: "host: " where host is a DNS-like name (letters, digits, '.', '-', '_') with a letter;
// fills `m` when `line` starts so.
void matchPdsh(std::string_view line, LauncherMatch& m) {
  size_t h = 0;
  bool letter = false;
  while (h < line.size() && h < 64 &&
         (std::isalnum(static_cast<unsigned char>(line[h])) || line[h] == '.' || line[h] == '-' ||
          line[h] == '_')) {
    letter = letter || std::isalpha(static_cast<unsigned char>(line[h]));
    ++h;
  }
  if (h > 0 && letter && std::isalnum(static_cast<unsigned char>(line[0])) && h < line.size() &&
      line[h] == ':' && (h + 1 == line.size() || line[h + 1] == ' ')) {
    m.kind = Launcher::kPdsh;
    m.length = h + 1 == line.size() ? h + 1 : h + 2;
    m.host = std::string(line.substr(0, h));
  }
}

}  // namespace

LauncherMatch matchLauncher(std::string_view line) {
  LauncherMatch m;
  if (line.empty()) return m;
  // [job,rank]<stream>:
  if (line[0] == '[') {
    size_t i = 0;
    std::optional<uint64_t> rank;
    std::string stream;
    if (jobRank(line, i, rank) && streamTag(line, i, stream)) {
      m.kind = Launcher::kOpenMpiTag;
      m.length = i;
      m.rank = rank;
      m.stream = stream;
      return m;
    }
    // [rank] text
    i = 1;
    auto r = digits(line, i);
    if (r && i + 1 < line.size() && line[i] == ']' && line[i + 1] == ' ') {
      m.kind = Launcher::kRankBracket;
      m.length = i + 2;
      m.rank = r;
      return m;
    }
    return m;
  }
  // <timestamp>[job,rank]<stream>: or <timestamp><stream>:
  size_t lt = line.find('<');
  if (lt != std::string_view::npos && lt > 0 && lt <= 80) {
    size_t tsEnd = line.rfind('[', lt);
    if (tsEnd == std::string_view::npos) tsEnd = lt;
    std::string_view ts = line.substr(0, tsEnd);
    bool ok = ts.find(':') != std::string_view::npos;
    bool digit = false;
    for (char c : ts) {
      ok = ok && timestampChar(c);
      digit = digit || isDigit(c);
    }
    size_t i = tsEnd;
    std::optional<uint64_t> rank;
    std::string stream;
    if (ok && digit && (tsEnd == lt || jobRank(line, i, rank)) && i == lt &&
        streamTag(line, i, stream)) {
      m.kind = Launcher::kOpenMpiTimestamp;
      m.length = i;
      m.rank = rank;
      m.stream = stream;
      return m;
    }
  }
  // srun --label: optional padding, rank, ": ".
  size_t i = 0;
  while (i < line.size() && i < 8 && line[i] == ' ')
    ++i;
  auto r = digits(line, i);
  if (r && i + 1 < line.size() && line[i] == ':' && line[i + 1] == ' ') {
    m.kind = Launcher::kSrunLabel;
    m.length = i + 2;
    m.rank = r;
  } else if (r && i + 1 == line.size() && line[i] == ':') {
    m.kind = Launcher::kSrunLabel;  // "0:" alone: an empty line of rank 0
    m.length = i + 1;
    m.rank = r;
  }
  if (m.kind != Launcher::kNone) return m;
  matchPdsh(line, m);
  return m;
}

const char* launcherName(Launcher kind) {
  switch (kind) {
    case Launcher::kOpenMpiTag:
      return "mpirun --tag-output";
    case Launcher::kOpenMpiTimestamp:
      return "mpirun --timestamp-output";
    case Launcher::kSrunLabel:
      return "srun --label";
    case Launcher::kRankBracket:
      return "mpiexec -prepend-rank / mpirun -l";
    case Launcher::kPdsh:
      return "pdsh";
    case Launcher::kNone:
      break;
  }
  return "none";
}

}  // namespace rdmabench::compare::detail

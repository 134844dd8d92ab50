#include "noise/proc_parse.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>

namespace rdmabench::noise {

namespace {

// Splits `text` into lines (without '\n').
std::vector<std::string_view> lines(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    out.push_back(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

// Whitespace-separated words.
std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t'))
      ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t')
      ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

template <typename T>
bool toNumber(std::string_view s, T& out) {
  if (s.empty()) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// Shared by /proc/interrupts and /proc/softirqs: header "CPU0 CPU1 ...", then "ID: counts [desc]".
std::vector<CounterRow> parseCounterTable(std::string_view text, bool withNames) {
  std::vector<CounterRow> rows;
  auto ls = lines(text);
  if (ls.empty()) return rows;
  std::vector<int> cpus;
  for (auto w : words(ls[0])) {
    int c = 0;
    if (w.size() > 3 && w.substr(0, 3) == "CPU" && toNumber(w.substr(3), c) && c >= 0 &&
        c < (1 << 20))
      cpus.push_back(c);
  }
  if (cpus.empty()) return rows;
  const int width = *std::max_element(cpus.begin(), cpus.end()) + 1;
  for (size_t li = 1; li < ls.size(); ++li) {
    std::string_view l = ls[li];
    size_t colon = l.find(':');
    if (colon == std::string_view::npos) continue;
    CounterRow row;
    row.id = std::string(trim(l.substr(0, colon)));
    if (row.id.empty()) continue;
    row.perCpu.assign(static_cast<size_t>(width), 0);
    auto ws = words(l.substr(colon + 1));
    size_t k = 0;
    for (; k < ws.size() && k < cpus.size(); ++k) {
      uint64_t v = 0;
      if (!toNumber(ws[k], v)) break;
      row.perCpu[static_cast<size_t>(cpus[k])] = v;
    }
    if (k == 0) continue;  // no counts at all
    if (withNames && k < ws.size()) {
      // The description: the rest of the line after the k-th count, as written.
      const char* from = ws[k].data();
      row.name = std::string(
          trim(std::string_view(from, static_cast<size_t>(l.data() + l.size() - from))));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

std::vector<CpuTimes> parseProcStat(std::string_view text) {
  std::vector<CpuTimes> out;
  for (auto l : lines(text)) {
    auto ws = words(l);
    if (ws.size() < 5 || ws[0].size() <= 3 || ws[0].substr(0, 3) != "cpu") continue;
    CpuTimes c;
    if (!toNumber(ws[0].substr(3), c.cpu) || c.cpu < 0) continue;
    uint64_t* fields[] = {&c.user,   &c.nice, &c.system,  &c.idle,
                          &c.iowait, &c.irq,  &c.softirq, &c.steal};
    bool ok = true;
    for (size_t i = 0; i < 8 && i + 1 < ws.size(); ++i)
      if (!toNumber(ws[i + 1], *fields[i])) ok = false;
    if (ok) out.push_back(c);
  }
  return out;
}

std::vector<CounterRow> parseInterrupts(std::string_view text) {
  return parseCounterTable(text, true);
}

std::vector<CounterRow> parseSoftirqs(std::string_view text) {
  return parseCounterTable(text, false);
}

std::string interruptLabel(const CounterRow& row) {
  bool numeric = !row.id.empty() && std::all_of(row.id.begin(), row.id.end(),
                                                [](char ch) { return ch >= '0' && ch <= '9'; });
  if (!numeric) return row.name;
  auto ws = words(row.name);
  return ws.empty() ? std::string() : std::string(ws.back());
}

std::optional<TaskStat> parseTaskStat(std::string_view text) {
  size_t open = text.find('(');
  size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    return std::nullopt;
  TaskStat t;
  if (!toNumber(trim(text.substr(0, open)), t.tid)) return std::nullopt;
  t.comm = std::string(text.substr(open + 1, close - open - 1));
  auto ws = words(trim(text.substr(close + 1)));
  // ws[0] is field 3 (state); field F is ws[F - 3].
  if (ws.size() < 37) return std::nullopt;
  t.state = ws[0].empty() ? '?' : ws[0][0];
  if (!toNumber(ws[11], t.utime) || !toNumber(ws[12], t.stime)) return std::nullopt;
  if (!toNumber(ws[36], t.processor)) return std::nullopt;
  return t;
}

std::optional<SchedStat> parseSchedstat(std::string_view text) {
  auto ws = words(trim(lines(text).empty() ? std::string_view() : lines(text)[0]));
  SchedStat s;
  if (ws.size() < 3 || !toNumber(ws[0], s.runNs) || !toNumber(ws[1], s.waitNs) ||
      !toNumber(ws[2], s.slices))
    return std::nullopt;
  return s;
}

std::vector<int> parseCpuList(std::string_view list) {
  std::vector<int> out;
  list = trim(list);
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = trim(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    if (item.empty()) continue;
    size_t dash = item.find('-');
    int a = 0, b = 0;
    if (dash == std::string_view::npos) {
      if (!toNumber(item, a)) return {};
      b = a;
    } else if (!toNumber(item.substr(0, dash), a) || !toNumber(item.substr(dash + 1), b)) {
      return {};
    }
    if (a < 0 || b < a || b - a > 65536) return {};
    for (int c = a; c <= b; ++c)
      out.push_back(c);
  }
  return out;
}

std::vector<int> parseCpusAllowedList(std::string_view statusText) {
  for (auto l : lines(statusText)) {
    constexpr std::string_view key = "Cpus_allowed_list:";
    if (l.substr(0, key.size()) == key) return parseCpuList(l.substr(key.size()));
  }
  return {};
}

}  // namespace rdmabench::noise

// "Did you mean" for unknown commands and options (help_gen.h).
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cli/help_gen.h"

namespace rdmabench::cli {

size_t editDistance(std::string_view a, std::string_view b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i)
    d[i][0] = i;
  for (size_t j = 0; j <= m; ++j)
    d[0][j] = j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

std::vector<std::string> suggestions(std::string_view word,
                                     const std::vector<std::string>& candidates) {
  // Dashes are spelling, not content: "-k" is 1 edit from "-s" but means nothing like it.
  const size_t dashes = word.find_first_not_of('-') == std::string_view::npos
                            ? word.size()
                            : word.find_first_not_of('-');
  const size_t letters = word.size() - dashes;
  const size_t limit = letters <= 3 ? 1 : 2;
  std::vector<std::string> best;
  size_t bestDistance = limit + 1;
  for (const auto& c : candidates) {
    if (c == word) continue;
    const size_t dist = editDistance(word, c);
    if (dist > limit) continue;
    if (dist < bestDistance) {
      bestDistance = dist;
      best.clear();
    }
    if (dist == bestDistance && std::find(best.begin(), best.end(), c) == best.end())
      best.push_back(c);
  }
  // A short option one edit from several others is noise, not a suggestion.
  if (letters <= 1 || best.size() > 3) best.clear();
  if (best.empty() && letters >= 2) {
    std::vector<std::string> prefixed;
    for (const auto& c : candidates)
      if (c.size() > word.size() && c.compare(0, word.size(), word) == 0) prefixed.push_back(c);
    if (prefixed.size() == 1) best = prefixed;
  }
  // A spelled-out command ("latency" for "lat"): the one dashless candidate of 3 or more letters
  // the word starts with, the nearest (by edit distance) when several do.
  if (best.empty() && dashes == 0) {
    size_t nearest = SIZE_MAX;
    for (const auto& c : candidates) {
      if (c.size() < 3 || c.size() >= word.size() || c[0] == '-' ||
          word.compare(0, c.size(), c) != 0)
        continue;
      const size_t dist = editDistance(word, c);
      if (dist < nearest) best.clear();
      if (dist <= nearest) best.push_back(c);
      nearest = std::min(nearest, dist);
    }
    if (best.size() > 1) best.clear();
  }
  return best;
}

std::string didYouMean(std::string_view word, const std::vector<std::string>& candidates) {
  std::vector<std::string> s = suggestions(word, candidates);
  if (s.empty()) return "";
  std::string out = "; did you mean '" + s[0] + "'";
  for (size_t i = 1; i < s.size(); ++i)
    out += (i + 1 == s.size() ? " or '" : ", '") + s[i] + "'";
  return out + "?";
}

std::vector<std::string> optionSpellings(const OptionGroups& groups) {
  std::vector<std::string> out;
  for (const auto& g : groups)
    for (const auto& d : optionDocs(g)) {
      out.push_back(d.longName);
      if (!d.shortName.empty()) out.push_back(d.shortName);
    }
  return out;
}

}  // namespace rdmabench::cli

#pragma once
// The verdict of `rdmabench pairs` (docs/fabric-map.md, "Verdict"): what --fail-on-outlier
// fails on. On top of the slow nodes and links of pairs_outliers.h, per figure (latency in us;
// bandwidth as cost = 1 / (MB/s)):
//  - Two clusters (findCut): when about half of the links are slow (a bad uplink between two
//    halves of an allocation), every node's median is slow and the node/link rule sees a
//    uniform map. Sorted in log space, the links split at the largest ratio between neighbours;
//    that split is a cut when the ratio >= cutMinGap(k). The nodes joined by links fast in both
//    directions form groups; the cut is named by its groups and its slow cross links.
//  - Absolute bounds: --max-lat (us, on each link's median) and --min-bw (MB/s, on each link).
//  - Descheduled measurements (extra.descheduled: the initiator lost its CPU) are no evidence
//    of a slowdown the lost CPU time can explain: a link's figure is "the scheduler's" when its
//    measurement lost at least the time by which it exceeds the baseline (latency: iterations x
//    (median - baseline), as a median that rose by x needs half of the round trips 2x longer;
//    bandwidth: bytes / figure - bytes / baseline), or an unknown amount (no schedstat). A
//    finding that rests on such figures is listed but is not a verdict (`confirmed` false).
// Thread-safety: pure functions of their arguments.

#include <utility>
#include <vector>

namespace rdmabench::collective {

struct PairsResult;

// Two clusters of links in one figure's cost matrix (cost[src][dst], NaN or <= 0 = none).
struct MatrixCut {
  bool found = false;
  double fastMedian = 0, slowMedian = 0;       // medians of the two clusters, cost units
  double gap = 0;                              // smallest slow cost / largest fast cost
  std::vector<std::pair<int, int>> slowLinks;  // (src, dst) of the slow cluster, ascending
  // Connected components of the graph whose edges are node pairs fast in every measured
  // direction; each ascending, ordered by their first rank. One group = the slow links do not
  // split the nodes (scattered slow links).
  std::vector<std::vector<int>> groups;
  int crossLinks = 0, slowCross = 0;  // measured links between two groups; how many are slow
  bool explained = false;  // every slow link touches a slow node or is a slow link already
  bool confirmed = true;   // at least half of the slow links are not the scheduler's
};

// The smallest ratio between the clusters that counts as a cut for outlier factor k:
// max(3, 1 + k / 10), i.e. never below the outlier rule's own floor (median + k x median/10)
// and at least 3x, above the 2x a topology's hop count can give between near and far nodes.
double cutMinGap(double k);

// The cut of `cost` (square; std::invalid_argument otherwise). found = false with fewer than
// 3 nodes or 2 measured links, or when the largest neighbour ratio is below minGap.
MatrixCut findCut(const std::vector<std::vector<double>>& cost, double minGap);

// Absolute bounds; 0 = none.
struct PairsBounds {
  double maxLatUs = 0;  // --max-lat: a link's latency median above it breaks it, us
  double minBwMBs = 0;  // --min-bw: a link's bandwidth below it breaks it, MB/s
};

// One link outside a bound.
struct BoundBreach {
  int src = 0, dst = 0;
  double value = 0;       // us or MB/s
  bool confirmed = true;  // not the scheduler's figure
};

// Everything pairs judges beyond the node/link outliers, and which findings are verdicts.
struct PairsVerdict {
  PairsBounds bounds;
  double cutMinGap = 0;
  MatrixCut latCut, bwCut;
  std::vector<BoundBreach> latBreaches, bwBreaches;  // worst first
  // Per finding of PairsResult::latOutliers.ranked / bwOutliers.ranked (same order): false when
  // it rests on the scheduler's figures (a link: its own is; a node: fewer than half of its
  // measured links are above the node threshold and not the scheduler's).
  std::vector<bool> latOutlierConfirmed, bwOutlierConfirmed;
  // [src][dst]: CPU time the measurement's initiator lost, us (0 = none; infinity = lost, the
  // amount unknown).
  std::vector<std::vector<double>> lostUs;
  int descheduledCount = 0, measurements = 0;
};

// Judges `r` (its matrices, outliers and info.extra["descheduled"]) against `bounds`.
PairsVerdict judgePairs(const PairsResult& r, const PairsBounds& bounds);

}  // namespace rdmabench::collective

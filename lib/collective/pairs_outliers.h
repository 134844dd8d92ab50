#pragma once
// Slow nodes and slow links of an all-pairs matrix (`rdmabench pairs`, docs/fabric-map.md).
//
// Input: an n x n matrix of a cost figure, higher = worse (latency in us; for bandwidth the
// caller passes 1 / (MB/s)), cost[src][dst] for src != dst; NaN or <= 0 = not measured.
// Decision, in this order (k >= 0; "spread(x)" = max(MAD(x), median(x) / 10), the floor as in
// `ring`, collective/outliers.h, so a quiet fabric's tiny MAD does not flag noise):
//  1. Node figure = median of the 2(n-1) directed links the node takes part in (its row and
//     its column). Node baseline = median of the node figures. A node is SLOW when its figure
//     > node baseline + k * spread(node figures). Because a slow node spoils only 2 of the
//     2(n-1) links of every other node, the other nodes' figures stay put.
//  2. Link baseline = median of the links that touch no slow node; a link that touches no slow
//     node is SLOW when its cost > link baseline + k * spread(those links). Links of a slow node
//     are explained by the node and are not listed separately.
// Needs n >= 3 (with two nodes there is nothing to compare against): fewer gives no outliers.
// Findings are ranked by severity = figure / baseline, highest first. Pure, thread-safe.

#include <vector>

namespace rdmabench::collective {

struct MatrixFinding {
  bool node = false;  // true: a slow node (`src` is the node, dst = -1); false: a slow link
  int src = 0, dst = -1;
  double cost = 0;      // the node figure or the link cost
  double baseline = 0;  // the baseline it was compared with (same unit)
  double threshold = 0;
  double severity = 0;  // cost / baseline
};

struct MatrixOutliers {
  double nodeBaseline = 0, nodeThreshold = 0;  // cost units
  double linkBaseline = 0, linkThreshold = 0;
  std::vector<double> nodeFigure;     // per node (NaN when it has no measured link)
  std::vector<MatrixFinding> ranked;  // slow nodes and slow links, highest severity first
};

// `cost` must be square (std::invalid_argument otherwise).
MatrixOutliers classifyMatrix(const std::vector<std::vector<double>>& cost, double k);

}  // namespace rdmabench::collective

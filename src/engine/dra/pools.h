// The resource pools a node can allocate from (upstream's GatherPools, incubating).
//
// Only a pool's newest generation counts. A pool whose slices are not all there (fewer
// than its resourceSliceCount of that generation, counted over every node) is incomplete:
// nothing is allocated from it, and a request for "all" devices fails on it. A pool with
// two devices of one name or a broken counter reference is invalid: nothing is allocated
// from it either. Pools are in (driver, pool) order, pools with devices that have binding
// conditions last; a pool's slices in name order.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model/dra_inventory.h"
#include "model/labels.h"
#include "model/status.h"

namespace gantry::dra {

// The node an allocation is for.
struct NodeRef {
  std::string_view name;
  const Labels& labels;
};

// NodeMatches: by name, all nodes, or a node selector (one of its terms; no terms matches
// no node). A selection with none of the three matches no node.
bool NodeMatches(const NodeRef& node, const NodeSelection& selection);

struct Pool {
  std::string driver;
  std::string name;
  bool incomplete = false;
  bool invalid = false;
  std::string invalid_reason;
  // The slices with devices that the node can see (their devices may still each have a
  // node selection of their own), by name.
  std::vector<const ResourceSlice*> slices_on_node;
  // The pool's other slices with devices (only gathered when they had to be looked up).
  std::vector<const ResourceSlice*> slices_elsewhere;
  std::map<std::string, const CounterSet*, std::less<>> counter_sets;

  std::string Id() const { return driver + "/" + name; }
};

std::vector<Pool> GatherPools(const Inventory& inventory, const NodeRef& node);

}  // namespace gantry::dra

#include "daemon/pending_reasons.h"

namespace gantry {
namespace {

bool Consume(std::string_view* text, std::string_view prefix) {
  if (!text->starts_with(prefix)) return false;
  text->remove_prefix(prefix.size());
  return true;
}

// "task NAME: why" -> "why". Task names are pod names: no ':' or spaces in them.
std::string_view WithoutTaskName(std::string_view text) {
  std::string_view rest = text;
  if (!Consume(&rest, "task ")) return text;
  const size_t colon = rest.find(": ");
  if (colon == std::string_view::npos || rest.substr(0, colon).find(' ') != std::string_view::npos)
    return text;
  return rest.substr(colon + 2);
}

// Why one task found no place (PlaceTasks' why_not, without the task's name).
PendingKind ClassifyTaskReason(std::string_view why) {
  why = WithoutTaskName(why);
  if (why.starts_with("topology: ")) return PendingKind::kTopology;
  if (why.starts_with("queue ")) return PendingKind::kQueueLimit;
  if (why.starts_with("0/") || why.starts_with("no nodes available")) return PendingKind::kNoFit;
  return PendingKind::kOther;
}

}  // namespace

std::string_view PendingKindName(PendingKind kind) {
  switch (kind) {
    case PendingKind::kQueueLimit:
      return "queue_limit";
    case PendingKind::kGangShort:
      return "gang_short";
    case PendingKind::kNoFit:
      return "no_fit";
    case PendingKind::kTopology:
      return "topology";
    case PendingKind::kGated:
      return "gated";
    case PendingKind::kVolume:
      return "volume";
    case PendingKind::kInvalid:
      return "invalid";
    case PendingKind::kGroupMissing:
      return "group_missing";
    case PendingKind::kBindBackoff:
      return "bind_backoff";
    case PendingKind::kPreempting:
      return "preempting";
    case PendingKind::kNotConsidered:
      return "not_considered";
    case PendingKind::kOther:
      return "other";
  }
  return "other";
}

const std::vector<PendingKind>& AllPendingKinds() {
  static const auto* kinds = new std::vector<PendingKind>{
      PendingKind::kQueueLimit, PendingKind::kGangShort,     PendingKind::kNoFit,
      PendingKind::kTopology,   PendingKind::kGated,         PendingKind::kVolume,
      PendingKind::kInvalid,    PendingKind::kGroupMissing,  PendingKind::kBindBackoff,
      PendingKind::kPreempting, PendingKind::kNotConsidered, PendingKind::kOther};
  return *kinds;
}

PendingKind ClassifyPendingReason(std::string_view reason) {
  // Notes after the first "; " (preempt's, reserve's) say what was tried about it.
  std::string_view text = reason;
  if (Consume(&text, "placed ")) {
    // "placed N task(s); the rest wait: <task reason>": a job that runs, short of tasks.
    const size_t rest = text.find("the rest wait: ");
    return rest == std::string_view::npos ? PendingKind::kOther
                                          : ClassifyTaskReason(text.substr(rest + 15));
  }
  if (Consume(&text, "not admitted: ")) {
    return text.starts_with("gang: ") ? PendingKind::kGangShort : PendingKind::kQueueLimit;
  }
  if (text.starts_with("not considered")) return PendingKind::kNotConsidered;
  if (text.starts_with("queue ")) return PendingKind::kQueueLimit;
  if (Consume(&text, "gang: ")) {
    // "gang: R of minMember M tasks could be placed (S short), so none were; <task reason>":
    // a required topology domain that had no room is the more useful answer.
    const size_t task = text.find("so none were; ");
    if (task != std::string_view::npos &&
        ClassifyTaskReason(text.substr(task + 14)) == PendingKind::kTopology) {
      return PendingKind::kTopology;
    }
    return PendingKind::kGangShort;
  }
  return ClassifyTaskReason(text);
}

}  // namespace gantry

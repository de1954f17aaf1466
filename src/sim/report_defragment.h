// The report's defragmentation section: per replay run, the GPUs idle on average and those
// a waiting whole-GPU job could not use, the movable tasks, the defragment evictions and
// the work they cost (summary.json's "idle_gpus_mean", "idle_unusable_gpus_mean",
// "movable_tasks", "defragment_evictions", "work_lost_gpu_hours").
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace gantry {

// HTML for the runs of `summary` that had unusable idle GPUs, movable tasks or defragment
// evictions; "" when none had. Values of the wrong type are shown as "-".
std::string RenderDefragmentHtml(const nlohmann::ordered_json& summary);

}  // namespace gantry

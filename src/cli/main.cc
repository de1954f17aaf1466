// gantry: the command line. See README.md.
#include <CLI/CLI.hpp>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"Gantry: a scheduler for AI workloads on Kubernetes"};
  app.require_subcommand(1);

  gantry::ScheduleOptions schedule;
  CLI::App* schedule_cmd =
      app.add_subcommand("schedule", "Run one scheduling session on a scenario file and print the decisions");
  schedule_cmd->add_option("--scenario", schedule.scenario, "Scenario YAML file")->required();
  schedule_cmd->add_option("--format", schedule.format, "Output format")
      ->check(CLI::IsMember({"table", "json"}));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  if (schedule_cmd->parsed()) return gantry::RunSchedule(schedule);
  return 2;
}

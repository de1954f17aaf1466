// gantry: the command line. See README.md.
#include <CLI/CLI.hpp>

#include "cli/cluster_view_cmd.h"
#include "cli/commands.h"

int main(int argc, char** argv) {
  // Linked as kubectl-gantry, `kubectl gantry SUBCOMMAND` runs it with the same arguments.
  CLI::App app{"Gantry: a scheduler for AI workloads on Kubernetes",
               gantry::ProgramName(argc > 0 ? argv[0] : nullptr)};
  app.set_version_flag("--version", "gantry " GANTRY_VERSION);
  app.require_subcommand(1);

  gantry::ScheduleOptions schedule;
  CLI::App* schedule_cmd = app.add_subcommand(
      "schedule", "Run one scheduling session on a scenario file and print the decisions");
  schedule_cmd->add_option("--scenario", schedule.scenario, "Scenario YAML file")->required();
  schedule_cmd->add_option("--format", schedule.format, "Output format")
      ->check(CLI::IsMember({"table", "json"}));

  gantry::SimOptions sim;
  CLI::App* sim_cmd = app.add_subcommand(
      "sim", "Replay a cluster and a workload through the engine and report what happened");
  sim_cmd->add_option("--cluster", sim.cluster, "Node list CSV (openb format) or scenario YAML");
  sim_cmd->add_option("--workload", sim.workload, "openb pod list CSV or generic job CSV");
  sim_cmd->add_option("--snapshot", sim.snapshot,
                      "A `gantry snapshot` file: its running pods the start, its pending pods "
                      "and recent arrivals the workload");
  sim_cmd->add_option("--generate", sim.generate,
                      "Synthetic workload: nodes=N,pods=N,rate=R,duration=S,seed=N,mix=A/B/C/D");
  sim_cmd->add_option("--datasets", sim.datasets,
                      "Datasets for a replay's jobs (dataset locality): count=N,zipf=Z,share=PCT,"
                      "size=MIN-MAX,bandwidth=BYTES,cache=BYTES,seed=N");
  sim_cmd->add_option("--protocol", sim.protocol, "fgd-atc23: the FGD paper's experiment");
  sim_cmd
      ->add_option("--arrival-scale", sim.arrival_scale,
                   "GPU demand to arrive, x capacity (protocol; 0.01 to 100, default 1.3)")
      ->type_name("NUMBER");
  sim_cmd
      ->add_option("--gpu-api", sim.gpu_api,
                   "How pods ask for GPUs: device-plugin (nvidia.com/gpu, the default) or dra "
                   "(GPUs published as DRA devices, requests as ResourceClaims)")
      ->type_name("API");
  sim_cmd->add_option("--policy", sim.policies, "Comma-separated policies")->capture_default_str();
  sim_cmd->add_option("--seeds", sim.seeds, "Seeds: 42, 42-51 or 1,5,9")->capture_default_str();
  sim_cmd->add_option("--out", sim.out, "Output directory")->capture_default_str();
  sim_cmd
      ->add_option("--period", sim.period,
                   "Seconds between scheduling sessions (replay; default 10)")
      ->type_name("SECONDS");
  sim_cmd
      ->add_option("--nodes-to-score", sim.nodes_to_score,
                   "Feasible nodes scored per task (replay; default 100, 0 all)")
      ->type_name("N");
  sim_cmd->add_option("--queues", sim.queues,
                      "Queue file: `queues:` as in a scenario (weights, guarantees, tree), "
                      "optional `config:` with actions, preemptionGraceSeconds, "
                      "starvationSeconds");
  sim_cmd->add_option("--actions", sim.actions,
                      "Replay actions, comma-separated (e.g. enqueue,reclaim,allocate,backfill)");
  sim_cmd
      ->add_option("--preemption-grace", sim.preemption_grace,
                   "Seconds a job waits before it may evict (preemptionGraceSeconds)")
      ->type_name("SECONDS");
  sim_cmd
      ->add_option("--starvation", sim.starvation,
                   "Seconds at the head of its queue before a job's nodes are held for it "
                   "(starvationSeconds; with the reserve action)")
      ->type_name("SECONDS");
  sim_cmd
      ->add_option("--movable", sim.movable,
                   "Replay: jobs whose pods the defragment action may move: all, shared (pods "
                   "with a share of one GPU) or a percent of jobs, chosen per seed")
      ->type_name("all|shared|PCT");
  sim_cmd
      ->add_option("--time-scale", sim.time_scale,
                   "Replay: arrivals this many times as dense (submit times divided by it, "
                   "durations kept; default 1)")
      ->type_name("F");
  sim_cmd
      ->add_option("--defragment-budget", sim.defragment_budget,
                   "Evictions per hour the defragment action may make "
                   "(defragmentEvictionsPerHour; default 10)")
      ->type_name("N");
  sim_cmd->add_option("--jobs", sim.jobs, "Runs at once (default 2, at most 256)")->type_name("N");

  gantry::ServeOptions serve;
  CLI::App* serve_cmd =
      app.add_subcommand("serve", "Run the scheduler against a Kubernetes API server");
  serve_cmd->add_option("--config", serve.config, "Daemon configuration YAML")->required();
  serve_cmd->add_option("--kubeconfig", serve.kubeconfig,
                        "kubeconfig (default: $KUBECONFIG, in-cluster)");
  serve_cmd->add_option("--identity", serve.identity, "Leader election identity");
  serve_cmd->add_option("--listen", serve.listen, "host:port for /metrics /healthz /readyz");
  serve_cmd->add_flag("--no-leader-elect", serve.no_leader_elect,
                      "Schedule without leader election");

  gantry::SnapshotOptions snapshot;
  CLI::App* snapshot_cmd = app.add_subcommand(
      "snapshot", "Write the live cluster in the scenario format, for `gantry sim --snapshot`");
  snapshot_cmd->add_option("--kubeconfig", snapshot.kubeconfig,
                           "kubeconfig (default: $KUBECONFIG, in-cluster)");
  snapshot_cmd->add_option("--out", snapshot.out, "Output file (- for standard output)")
      ->capture_default_str();
  snapshot_cmd
      ->add_option("--scheduler-name", snapshot.scheduler_name,
                   "The schedulerName whose pending pods are the workload")
      ->capture_default_str();
  snapshot_cmd
      ->add_option("--window", snapshot.window_s,
                   "Recent arrivals: pods created this many seconds before (default 3600)")
      ->type_name("SECONDS");

  std::vector<std::string> validate_files;
  CLI::App* validate_cmd = app.add_subcommand(
      "validate",
      "Check gantry configurations and Kubernetes manifests (PodGroups, Queues, pods) offline");
  validate_cmd->add_option("files", validate_files, "YAML files")->required();

  gantry::ClusterViewCommands cluster_view;
  gantry::AddClusterViewCommands(app, &cluster_view);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  if (schedule_cmd->parsed()) return gantry::RunSchedule(schedule);
  if (sim_cmd->parsed()) return gantry::RunSim(sim);
  if (serve_cmd->parsed()) return gantry::RunServe(serve);
  if (validate_cmd->parsed()) return gantry::RunValidate(validate_files);
  if (snapshot_cmd->parsed()) return gantry::RunSnapshot(snapshot);
  if (int rc = gantry::RunClusterView(cluster_view); rc >= 0) return rc;
  return 2;
}

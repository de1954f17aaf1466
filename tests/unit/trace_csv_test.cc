#include "sim/trace_csv.h"

#include "model/limits.h"
#include "sim/csv_cursor.h"
#include "tests/unit/test_util.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace gantry {
namespace {

constexpr Milli kMiB = 1024LL * 1024 * kMilliPerUnit;
constexpr Milli kGi = 1024LL * kMiB;

::testing::AssertionResult StartsWith(const std::string& text, const std::string& prefix) {
  if (text.rfind(prefix, 0) == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "\"" << text << "\" does not start with \"" << prefix << "\"";
}

// The shipped openb traces, found from this file's path (tests/unit/ in the repository).
std::string DataPath(const std::string& file) {
  std::string self = __FILE__;
  size_t at = self.rfind("tests/unit/");
  std::string root = at == std::string::npos ? std::string() : self.substr(0, at);
  return root + "data/alibaba-gpu-v2023/" + file;
}

const char kNodeHeader[] = "sn,cpu_milli,memory_mib,gpu,model\n";
const char kPodHeader[] =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_"
    "time,"
    "scheduled_time\n";
const char kShortPodHeader[] = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n";
const char kJobHeader[] =
    "submit_time,duration,pods,gpus_per_pod,gpu_fraction,cpu,memory,queue,name,priority,min_member,"
    "gpu_model\n";

// A malformed input and what its error must start with: "source:line:column: column".
struct BadCase {
  const char* what;
  std::string text;
  std::string prefix;
  std::string detail;  // also in the message
};

void PrintTo(const BadCase& c, std::ostream* os) {
  *os << c.what;
}

// ---------------------------------------------------------------- node lists

TEST(NodeCsvTest, ParsesRowsIntoExactFields) {
  auto nodes =
      Must(ParseNodeCsv(std::string(kNodeHeader) + "openb-node-0000,64000,262144,2,P100\n"
                                                   "openb-node-0001,96000,786432,8,V100M32\n"
                                                   "cpu-node,32000,131072,0,\n",
                        "nodes.csv"));
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[0].name, "openb-node-0000");
  EXPECT_EQ(nodes[0].cpu_milli, 64000);
  EXPECT_EQ(nodes[0].memory_mib, 262144);
  EXPECT_EQ(nodes[0].gpus, 2);
  EXPECT_EQ(nodes[0].model, "P100");
  EXPECT_EQ(nodes[1].name, "openb-node-0001");
  EXPECT_EQ(nodes[1].cpu_milli, 96000);
  EXPECT_EQ(nodes[1].memory_mib, 786432);
  EXPECT_EQ(nodes[1].gpus, 8);
  EXPECT_EQ(nodes[1].model, "V100M32");
  EXPECT_EQ(nodes[2].name, "cpu-node");
  EXPECT_EQ(nodes[2].gpus, 0);
  EXPECT_EQ(nodes[2].model, "");
}

TEST(NodeCsvTest, AcceptsCrlfAndBlankLines) {
  auto nodes = Must(
      ParseNodeCsv("sn,cpu_milli,memory_mib,gpu,model\r\n\r\nn0,1000,2048,1,T4\r\n\n", "n.csv"));
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].name, "n0");
  EXPECT_EQ(nodes[0].model, "T4");  // no trailing '\r'
}

TEST(NodeCsvTest, LineNumbersCountBlankLines) {
  // The bad row is the file's fourth line, after a blank one.
  auto nodes =
      ParseNodeCsv(std::string(kNodeHeader) + "n0,1000,2048,1,T4\n\nn1,x,2048,1,T4\n", "n.csv");
  ASSERT_FALSE(nodes.ok());
  EXPECT_TRUE(StartsWith(nodes.status().message(), "n.csv:4:2: cpu_milli"));
}

class NodeCsvErrorTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(NodeCsvErrorTest, NamesSourceLineColumnAndField) {
  auto nodes = ParseNodeCsv(GetParam().text, "nodes.csv");
  ASSERT_FALSE(nodes.ok()) << GetParam().what;
  EXPECT_EQ(nodes.status().code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(StartsWith(nodes.status().message(), GetParam().prefix)) << GetParam().what;
  EXPECT_TRUE(Contains(nodes.status().message(), GetParam().detail)) << GetParam().what;
}

INSTANTIATE_TEST_SUITE_P(
    Malformed, NodeCsvErrorTest,
    ::testing::Values(
        BadCase{"renamed header column", "sn,cpu,memory_mib,gpu,model\nn0,1,1,1,T4\n",
                "nodes.csv:1:2: ", "expected column \"cpu_milli\", got \"cpu\""},
        BadCase{"header of a pod list", std::string(kShortPodHeader) + "p,1,1,0,0\n",
                "nodes.csv:1:1: ", "expected column \"sn\", got \"name\""},
        BadCase{"header too short", "sn,cpu_milli,memory_mib,gpu\nn0,1,1,1\n",
                "nodes.csv:1:1: ", "expected the header \"sn,cpu_milli,memory_mib,gpu,model\""},
        BadCase{"too few columns", std::string(kNodeHeader) + "n0,64000,262144,2\n",
                "nodes.csv:2:1: ", "expected 5 columns, got 4"},
        BadCase{"too many columns", std::string(kNodeHeader) + "n0,64000,262144,2,P100,x\n",
                "nodes.csv:2:1: ", "expected 5 columns, got 6"},
        BadCase{"not an integer", std::string(kNodeHeader) + "n0,64k,262144,2,P100\n",
                "nodes.csv:2:2: cpu_milli", "expected an integer, got \"64k\""},
        BadCase{"a fraction", std::string(kNodeHeader) + "n0,64000,1.5,2,P100\n",
                "nodes.csv:2:3: memory_mib", "expected an integer, got \"1.5\""},
        BadCase{"an empty number", std::string(kNodeHeader) + "n0,64000,262144,,P100\n",
                "nodes.csv:2:4: gpu", "expected an integer, got \"\""},
        BadCase{"negative memory", std::string(kNodeHeader) + "n0,64000,-1,2,P100\n",
                "nodes.csv:2:3: memory_mib", "-1 is out of range"},
        BadCase{"negative cpu", std::string(kNodeHeader) + "n0,-64000,1,2,P100\n",
                "nodes.csv:2:2: cpu_milli", "-64000 is out of range"},
        BadCase{"too many GPUs", std::string(kNodeHeader) + "n0,64000,262144,257,P100\n",
                "nodes.csv:2:4: gpu", "257 is out of range [0, 256]"},
        BadCase{"GPUs without a model", std::string(kNodeHeader) + "n0,64000,262144,2,\n",
                "nodes.csv:2:5: model", "needs a model"},
        BadCase{"no name", std::string(kNodeHeader) + ",64000,262144,2,P100\n", "nodes.csv:2:1: sn",
                "empty node name"},
        BadCase{"error on a later row",
                std::string(kNodeHeader) + "n0,1,1,0,\nn1,1,1,0,\nn2,1,1,x,\n",
                "nodes.csv:4:4: gpu", "got \"x\""}));

TEST(NodeCsvTest, EmptyFileAndHeaderOnlyAreErrors) {
  for (const char* text : {"", "\n\n", "\r\n"}) {
    auto nodes = ParseNodeCsv(text, "nodes.csv");
    ASSERT_FALSE(nodes.ok()) << "accepted \"" << text << "\"";
    EXPECT_TRUE(StartsWith(nodes.status().message(), "nodes.csv: "));
    EXPECT_TRUE(Contains(nodes.status().message(), "empty"));
  }
  auto header_only = ParseNodeCsv(kNodeHeader, "nodes.csv");
  ASSERT_FALSE(header_only.ok());
  EXPECT_TRUE(StartsWith(header_only.status().message(), "nodes.csv: "));
  EXPECT_TRUE(Contains(header_only.status().message(), "no nodes"));
}

TEST(NodeCsvTest, MemoryBeyondWhatMilliUnitsHoldIsAnError) {
  // 20 000 000 000 MiB is 2.1e19 milli-bytes, past INT64_MAX (9.2e18): it must be refused
  // (by the reader, naming the column, or by AddTraceNodes), never wrapped. 1 PiB fits.
  auto nodes = ParseNodeCsv(std::string(kNodeHeader) + "n0,1000,20000000000,1,T4\n", "nodes.csv");
  if (nodes.ok()) {
    ClusterState cluster;
    Status st = AddTraceNodes(*nodes, &cluster);
    EXPECT_FALSE(st.ok()) << "accepted; memory became " << cluster.capacity().Get(kMemory)
                          << " milli-bytes";
  } else {
    EXPECT_TRUE(StartsWith(nodes.status().message(), "nodes.csv:2:3: memory_mib"));
  }
  auto big =
      Must(ParseNodeCsv(std::string(kNodeHeader) + "n0,1000,1073741824,1,T4\n", "nodes.csv"));
  ClusterState cluster;
  ASSERT_TRUE(AddTraceNodes(big, &cluster).ok());
  EXPECT_EQ(cluster.capacity().Get(kMemory), 1024 * 1024 * kGi);
}

TEST(NodeCsvTest, MissingFileIsNotFoundNamingThePath) {
  auto nodes = ReadNodeCsv("/nonexistent/dir/nodes.csv");
  ASSERT_FALSE(nodes.ok());
  EXPECT_EQ(nodes.status().code(), Status::Code::kNotFound);
  EXPECT_TRUE(Contains(nodes.status().message(), "/nonexistent/dir/nodes.csv"));
}

// ---------------------------------------------------------------- pod lists

TEST(PodCsvTest, ParsesElevenColumnRowsIntoExactFields) {
  auto pods =
      Must(ParsePodCsv(std::string(kPodHeader) +
                           "openb-pod-0000,12000,16384,1,1000,,LS,Running,0,12537496,0\n"
                           "openb-pod-0001,6000,12288,1,460,V100M16|V100M32,BE,Pending,427061,,\n"
                           "openb-pod-0002,88000,327680,8,1000,G2,LS,Failed,5,10,7\n"
                           "openb-pod-0003,4000,8192,0,0,,Burstable,Succeeded,100,100,\n",
                       "pods.csv"));
  ASSERT_EQ(pods.size(), 4u);
  const TracePod& a = pods[0];
  EXPECT_EQ(a.name, "openb-pod-0000");
  EXPECT_EQ(a.cpu_milli, 12000);
  EXPECT_EQ(a.memory_mib, 16384);
  EXPECT_EQ(a.num_gpu, 1);
  EXPECT_EQ(a.gpu_milli, 1000);
  EXPECT_TRUE(a.gpu_spec.empty());
  EXPECT_EQ(a.qos, "LS");
  EXPECT_EQ(a.phase, "Running");
  EXPECT_TRUE(a.has_times);
  EXPECT_EQ(a.creation_time, 0);
  EXPECT_EQ(a.deletion_time, 12537496);
  EXPECT_EQ(a.scheduled_time, 0);
  EXPECT_EQ(a.line, 2);

  const TracePod& b = pods[1];
  EXPECT_EQ(b.num_gpu, 1);
  EXPECT_EQ(b.gpu_milli, 460);
  EXPECT_EQ(b.gpu_spec, (std::vector<std::string>{"V100M16", "V100M32"}));
  EXPECT_EQ(b.qos, "BE");
  EXPECT_EQ(b.phase, "Pending");
  EXPECT_EQ(b.creation_time, 427061);
  EXPECT_EQ(b.deletion_time, 0);  // empty: never deleted
  EXPECT_EQ(b.scheduled_time, 0);
  EXPECT_EQ(b.line, 3);

  const TracePod& c = pods[2];
  EXPECT_EQ(c.cpu_milli, 88000);
  EXPECT_EQ(c.num_gpu, 8);
  EXPECT_EQ(c.gpu_milli, 1000);
  EXPECT_EQ(c.gpu_spec, (std::vector<std::string>{"G2"}));
  EXPECT_EQ(c.creation_time, 5);
  EXPECT_EQ(c.deletion_time, 10);
  EXPECT_EQ(c.scheduled_time, 7);

  const TracePod& d = pods[3];
  EXPECT_EQ(d.num_gpu, 0);
  EXPECT_EQ(d.gpu_milli, 0);
  EXPECT_EQ(d.qos, "Burstable");
  EXPECT_EQ(d.deletion_time, 100);  // equal to creation is allowed
  EXPECT_EQ(d.line, 5);
}

TEST(PodCsvTest, ParsesFiveColumnRowsWithoutTimes) {
  auto pods = Must(ParsePodCsv(std::string(kShortPodHeader) + "openb-pod-0000,12000,16384,1,1000\n"
                                                              "openb-pod-0001,6000,12288,1,460\n"
                                                              "openb-pod-0002,32000,65536,4,1000\n"
                                                              "openb-pod-0003,2000,4096,0,0\n",
                               "multigpu.csv"));
  ASSERT_EQ(pods.size(), 4u);
  for (const TracePod& p : pods) {
    EXPECT_FALSE(p.has_times) << p.name;
    EXPECT_EQ(p.creation_time, 0);
    EXPECT_EQ(p.deletion_time, 0);
    EXPECT_TRUE(p.gpu_spec.empty());
    EXPECT_EQ(p.qos, "");
    EXPECT_EQ(p.phase, "");
  }
  EXPECT_EQ(pods[1].name, "openb-pod-0001");
  EXPECT_EQ(pods[1].cpu_milli, 6000);
  EXPECT_EQ(pods[1].memory_mib, 12288);
  EXPECT_EQ(pods[1].gpu_milli, 460);
  EXPECT_EQ(pods[2].num_gpu, 4);
  EXPECT_EQ(pods[2].gpu_milli, 1000);
  EXPECT_EQ(pods[3].num_gpu, 0);
  EXPECT_EQ(pods[3].line, 5);
}

class PodCsvErrorTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(PodCsvErrorTest, NamesSourceLineColumnAndField) {
  auto pods = ParsePodCsv(GetParam().text, "pods.csv");
  ASSERT_FALSE(pods.ok()) << GetParam().what;
  EXPECT_EQ(pods.status().code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(StartsWith(pods.status().message(), GetParam().prefix)) << GetParam().what;
  EXPECT_TRUE(Contains(pods.status().message(), GetParam().detail)) << GetParam().what;
}

std::string LongRow(const std::string& row) {
  return std::string(kPodHeader) + row + "\n";
}
std::string ShortRow(const std::string& row) {
  return std::string(kShortPodHeader) + row + "\n";
}

INSTANTIATE_TEST_SUITE_P(
    Malformed, PodCsvErrorTest,
    ::testing::Values(
        BadCase{"long header, renamed column",
                "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_model,qos,pod_phase,creation_time,"
                "deletion_time,scheduled_time\n",
                "pods.csv:1:6: ", "expected column \"gpu_spec\", got \"gpu_model\""},
        BadCase{"short header, renamed column",
                "name,cpu,memory_mib,num_gpu,gpu_milli\np,1,1,0,0\n",
                "pods.csv:1:2: ", "expected column \"cpu_milli\""},
        BadCase{"header of neither width", "name,cpu_milli,memory_mib\np,1,1\n",
                "pods.csv:1:1: ", "expected the header"},
        BadCase{"long row too short", LongRow("p,1000,1024,1,1000,,LS,Running,0,10"),
                "pods.csv:2:1: ", "expected 11 columns, got 10"},
        BadCase{"short row with eleven cells", ShortRow("p,1000,1024,1,1000,,LS,Running,0,10,0"),
                "pods.csv:2:1: ", "expected 5 columns, got 11"},
        BadCase{"no name", ShortRow(",1000,1024,1,1000"), "pods.csv:2:1: name", "empty pod name"},
        BadCase{"cpu not an integer", ShortRow("p,1e3,1024,1,1000"), "pods.csv:2:2: cpu_milli",
                "expected an integer, got \"1e3\""},
        BadCase{"negative cpu", ShortRow("p,-100,1024,1,1000"), "pods.csv:2:2: cpu_milli",
                "-100 is out of range"},
        BadCase{"memory with a unit", ShortRow("p,100,16Gi,1,1000"), "pods.csv:2:3: memory_mib",
                "expected an integer, got \"16Gi\""},
        BadCase{"num_gpu not an integer", ShortRow("p,100,1024,one,1000"), "pods.csv:2:4: num_gpu",
                "expected an integer, got \"one\""},
        BadCase{"negative num_gpu", ShortRow("p,100,1024,-1,1000"), "pods.csv:2:4: num_gpu",
                "-1 is out of range"},
        BadCase{"gpu_milli above 1000", ShortRow("p,100,1024,1,1001"), "pods.csv:2:5: gpu_milli",
                "1001 is out of range [0, 1000]"},
        BadCase{"negative gpu_milli", ShortRow("p,100,1024,1,-5"), "pods.csv:2:5: gpu_milli",
                "-5 is out of range"},
        BadCase{"multi-GPU pod with a share", ShortRow("p,100,1024,2,500"),
                "pods.csv:2:5: gpu_milli", "2 GPUs must take whole GPUs (1000), got 500"},
        BadCase{"8-GPU pod with a share", LongRow("p,100,1024,8,999,,LS,Running,0,10,0"),
                "pods.csv:2:5: gpu_milli", "got 999"},
        BadCase{"GPU pod with no share", ShortRow("p,100,1024,1,0"), "pods.csv:2:5: gpu_milli",
                "share above 0"},
        BadCase{"CPU pod with a share", ShortRow("p,100,1024,0,500"), "pods.csv:2:5: gpu_milli",
                "without GPUs must have 0, got 500"},
        BadCase{"creation time missing", LongRow("p,100,1024,0,0,,LS,Running,,10,0"),
                "pods.csv:2:9: creation_time", "expected an integer, got \"\""},
        BadCase{"negative creation time", LongRow("p,100,1024,0,0,,LS,Running,-1,10,0"),
                "pods.csv:2:9: creation_time", "-1 is out of range"},
        BadCase{"deletion time not an integer", LongRow("p,100,1024,0,0,,LS,Running,0,soon,0"),
                "pods.csv:2:10: deletion_time", "got \"soon\""},
        BadCase{"scheduled time not an integer", LongRow("p,100,1024,0,0,,LS,Running,0,10,x"),
                "pods.csv:2:11: scheduled_time", "got \"x\""},
        BadCase{"deletion before creation", LongRow("p,100,1024,0,0,,LS,Running,100,50,0"),
                "pods.csv:2:10: deletion_time", "50 is before creation_time 100"},
        BadCase{"error on the third row",
                std::string(kShortPodHeader) + "a,1,1,0,0\nb,1,1,0,0\nc,1,1,3,700\n",
                "pods.csv:4:5: gpu_milli", "3 GPUs"}));

TEST(PodCsvTest, EmptyFileAndNoRowsAreErrors) {
  auto empty = ParsePodCsv("", "pods.csv");
  ASSERT_FALSE(empty.ok());
  EXPECT_TRUE(StartsWith(empty.status().message(), "pods.csv: "));
  EXPECT_TRUE(Contains(empty.status().message(), "empty"));
  for (const char* header : {kPodHeader, kShortPodHeader}) {
    auto none = ParsePodCsv(std::string(header) + "\n\n", "pods.csv");
    ASSERT_FALSE(none.ok());
    EXPECT_TRUE(StartsWith(none.status().message(), "pods.csv: "));
    EXPECT_TRUE(Contains(none.status().message(), "empty workload"));
  }
}

TEST(PodCsvTest, MemoryBeyondWhatMilliUnitsHoldIsAnError) {
  // As for nodes: 2.1e19 milli-bytes do not fit in an int64 Milli (SpecOfPod multiplies
  // memory_mib by 1024 x 1024 x 1000), so the reader must refuse the row.
  auto pods = ParsePodCsv(std::string(kShortPodHeader) + "p,1000,20000000000,1,1000\n", "pods.csv");
  ASSERT_FALSE(pods.ok()) << "accepted memory_mib 20000000000";
  EXPECT_TRUE(StartsWith(pods.status().message(), "pods.csv:2:3: memory_mib"));
  auto big = ParsePodCsv(std::string(kShortPodHeader) + "p,1000,1073741824,1,1000\n", "pods.csv");
  EXPECT_TRUE(big.ok()) << big.status().message();
}

// ---------------------------------------------------------------- job lists

TEST(JobCsvTest, ParsesEveryColumnIntoExactFields) {
  auto jobs =
      Must(ParseJobCsv(std::string(kJobHeader) + "0,3600,4,8,,32,256Gi,team-a,train,5,2,A100|H100\n"
                                                 "10,0,1,0,0.25,500m,1Gi,,,,1,\n"
                                                 "20,60,3,1,0,2,4Gi,team-b,,-3,3,\n",
                       "jobs.csv"));
  ASSERT_EQ(jobs.size(), 3u);
  const TraceJob& a = jobs[0];
  EXPECT_EQ(a.name, "train");
  EXPECT_EQ(a.submit_time, 0);
  EXPECT_EQ(a.duration, 3600);
  EXPECT_EQ(a.pods, 4);
  EXPECT_EQ(a.min_member, 2);
  EXPECT_EQ(a.gpus_per_pod, 8);
  EXPECT_EQ(a.gpu_milli, 0);
  EXPECT_EQ(a.cpu, 32000);
  EXPECT_EQ(a.memory, 256 * kGi);
  EXPECT_EQ(a.queue, "team-a");
  EXPECT_EQ(a.priority, 5);
  EXPECT_EQ(a.gpu_models, (std::vector<std::string>{"A100", "H100"}));
  EXPECT_EQ(a.line, 2);

  const TraceJob& b = jobs[1];
  EXPECT_EQ(b.name, "job-1");  // no name: numbered by row
  EXPECT_EQ(b.submit_time, 10);
  EXPECT_EQ(b.duration, 0);
  EXPECT_EQ(b.pods, 1);
  EXPECT_EQ(b.min_member, 1);
  EXPECT_EQ(b.gpus_per_pod, 0);
  EXPECT_EQ(b.gpu_milli, 250);
  EXPECT_EQ(b.cpu, 500);
  EXPECT_EQ(b.memory, kGi);
  EXPECT_EQ(b.queue, "default");
  EXPECT_EQ(b.priority, 0);
  EXPECT_TRUE(b.gpu_models.empty());
  EXPECT_EQ(b.line, 3);

  const TraceJob& c = jobs[2];
  EXPECT_EQ(c.name, "job-2");
  EXPECT_EQ(c.pods, 3);
  EXPECT_EQ(c.min_member, 3);
  EXPECT_EQ(c.gpus_per_pod, 1);
  EXPECT_EQ(c.gpu_milli, 0);  // a zero fraction beside whole GPUs is fine
  EXPECT_EQ(c.cpu, 2000);
  EXPECT_EQ(c.queue, "team-b");
  EXPECT_EQ(c.priority, -3);
}

TEST(JobCsvTest, RequiredColumnsOnlyInAnyOrderTakeDefaults) {
  auto jobs = Must(
      ParseJobCsv("memory,cpu,gpus_per_pod,duration,submit_time\n16Gi,4,1,60,5\n", "jobs.csv"));
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].submit_time, 5);
  EXPECT_EQ(jobs[0].duration, 60);
  EXPECT_EQ(jobs[0].gpus_per_pod, 1);
  EXPECT_EQ(jobs[0].cpu, 4000);
  EXPECT_EQ(jobs[0].memory, 16 * kGi);
  EXPECT_EQ(jobs[0].pods, 1);
  EXPECT_EQ(jobs[0].min_member, 1);
  EXPECT_EQ(jobs[0].gpu_milli, 0);
  EXPECT_EQ(jobs[0].queue, "default");
  EXPECT_EQ(jobs[0].priority, 0);
  EXPECT_EQ(jobs[0].name, "job-0");
  EXPECT_TRUE(jobs[0].gpu_models.empty());
}

class JobCsvErrorTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(JobCsvErrorTest, NamesSourceLineColumnAndField) {
  auto jobs = ParseJobCsv(GetParam().text, "jobs.csv");
  ASSERT_FALSE(jobs.ok()) << GetParam().what;
  EXPECT_EQ(jobs.status().code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(StartsWith(jobs.status().message(), GetParam().prefix)) << GetParam().what;
  EXPECT_TRUE(Contains(jobs.status().message(), GetParam().detail)) << GetParam().what;
}

// submit_time,duration,gpus_per_pod,gpu_fraction,cpu,memory: columns 1..6.
std::string JobRow(const std::string& row) {
  return "submit_time,duration,gpus_per_pod,gpu_fraction,cpu,memory\n" + row + "\n";
}

INSTANTIATE_TEST_SUITE_P(
    Malformed, JobCsvErrorTest,
    ::testing::Values(
        BadCase{"unknown column", "submit_time,duration,gpus,cpu,memory\n0,1,1,1,1\n",
                "jobs.csv:1:3: ",
                "unknown column \"gpus\" (known: submit_time, duration, pods, gpus_per_pod"},
        BadCase{"column twice", "submit_time,duration,gpus_per_pod,cpu,memory,cpu\n",
                "jobs.csv:1:6: ", "column \"cpu\" appears twice"},
        BadCase{"missing required column", "submit_time,duration,gpus_per_pod,cpu\n0,1,1,1\n",
                "jobs.csv:1:1: ", "missing the required column \"memory\""},
        BadCase{"row too short", JobRow("0,60,1,,4"),
                "jobs.csv:2:1: ", "expected 6 columns, got 5"},
        BadCase{"row too long", JobRow("0,60,1,,4,1Gi,x"),
                "jobs.csv:2:1: ", "expected 6 columns, got 7"},
        BadCase{"submit not an integer", JobRow("1.5,60,1,,4,1Gi"), "jobs.csv:2:1: submit_time",
                "expected an integer, got \"1.5\""},
        BadCase{"negative duration", JobRow("0,-60,1,,4,1Gi"), "jobs.csv:2:2: duration",
                "-60 is out of range"},
        BadCase{"gpus not an integer", JobRow("0,60,two,,4,1Gi"), "jobs.csv:2:3: gpus_per_pod",
                "got \"two\""},
        BadCase{"too many gpus", JobRow("0,60,257,,4,1Gi"), "jobs.csv:2:3: gpus_per_pod",
                "257 is out of range [0, 256]"},
        BadCase{"fraction not a quantity", JobRow("0,60,0,half,4,1Gi"),
                "jobs.csv:2:4: gpu_fraction", "half"},
        BadCase{"fraction of one", JobRow("0,60,0,1,4,1Gi"), "jobs.csv:2:4: gpu_fraction",
                "at least 0 and below 1"},
        BadCase{"negative fraction", JobRow("0,60,0,-0.5,4,1Gi"), "jobs.csv:2:4: gpu_fraction",
                "at least 0 and below 1"},
        BadCase{"fraction with whole GPUs", JobRow("0,60,2,0.5,4,1Gi"),
                "jobs.csv:2:4: gpu_fraction", "either whole GPUs or a fraction"},
        BadCase{"cpu not a quantity", JobRow("0,60,1,,4 cores,1Gi"), "jobs.csv:2:5: cpu",
                "4 cores"},
        BadCase{"negative cpu", JobRow("0,60,1,,-2,1Gi"), "jobs.csv:2:5: cpu",
                "must not be negative"},
        BadCase{"negative memory", JobRow("0,60,1,,2,-1Gi"), "jobs.csv:2:6: memory",
                "must not be negative"},
        BadCase{"zero pods", "submit_time,duration,pods,gpus_per_pod,cpu,memory\n0,60,0,1,1,1Gi\n",
                "jobs.csv:2:3: pods", "0 is out of range [1, 1000000]"},
        BadCase{"min_member above pods",
                "submit_time,duration,pods,min_member,gpus_per_pod,cpu,memory\n0,60,2,3,1,1,1Gi\n",
                "jobs.csv:2:4: min_member", "3 is out of range [1, 2]"},
        BadCase{"priority not an integer",
                "submit_time,duration,gpus_per_pod,cpu,memory,priority\n0,60,1,1,1Gi,high\n",
                "jobs.csv:2:6: priority", "got \"high\""},
        BadCase{"error on a later row", JobRow("0,60,1,,4,1Gi") + "5,60,1,,x,1Gi\n",
                "jobs.csv:3:5: cpu", "\"x\""}));

TEST(JobCsvTest, EmptyFileAndNoRowsAreErrors) {
  auto empty = ParseJobCsv("", "jobs.csv");
  ASSERT_FALSE(empty.ok());
  EXPECT_TRUE(StartsWith(empty.status().message(), "jobs.csv: "));
  EXPECT_TRUE(Contains(empty.status().message(), "empty"));
  auto none = ParseJobCsv(kJobHeader, "jobs.csv");
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(StartsWith(none.status().message(), "jobs.csv: "));
  EXPECT_TRUE(Contains(none.status().message(), "empty workload"));
}

// ---------------------------------------------------------------- AddTraceNodes

TEST(AddTraceNodesTest, AddsCapacityModelsAndLabels) {
  std::vector<TraceNode> nodes = {{"g0", 64000, 262144, 2, "P100"},
                                  {"g1", 96000, 786432, 8, "V100M32"},
                                  {"c0", 32000, 131072, 0, ""}};
  ClusterState cluster;
  ASSERT_TRUE(AddTraceNodes(nodes, &cluster).ok());
  ASSERT_EQ(cluster.nodes().size(), 3u);
  EXPECT_EQ(cluster.capacity().Get(kCpu), 64000 + 96000 + 32000);
  EXPECT_EQ(cluster.capacity().Get(kMemory), (262144 + 786432 + 131072) * kMiB);
  EXPECT_EQ(cluster.capacity().Get(kGpu), 10 * 1000);

  const Node& g0 = cluster.node(cluster.FindNode("g0"));
  EXPECT_EQ(g0.allocatable.Get(kCpu), 64000);
  EXPECT_EQ(g0.allocatable.Get(kMemory), 256 * kGi);
  EXPECT_EQ(g0.allocatable.Get(kGpu), 2000);
  ASSERT_EQ(g0.gpus.size(), 2u);
  for (const GpuDevice& g : g0.gpus) {
    EXPECT_EQ(GpuModels().Name(g.model), "P100");
    EXPECT_EQ(g.free_milli(), 1000);
  }
  ASSERT_NE(g0.labels.Find("gantry.dev/gpu-model"), nullptr);
  EXPECT_EQ(*g0.labels.Find("gantry.dev/gpu-model"), "P100");

  const Node& g1 = cluster.node(cluster.FindNode("g1"));
  ASSERT_EQ(g1.gpus.size(), 8u);
  EXPECT_EQ(GpuModels().Name(g1.gpus[7].model), "V100M32");

  const Node& c0 = cluster.node(cluster.FindNode("c0"));
  EXPECT_TRUE(c0.gpus.empty());
  EXPECT_EQ(c0.allocatable.Get(kGpu), 0);
  EXPECT_EQ(c0.labels.Find("gantry.dev/gpu-model"), nullptr);
}

TEST(AddTraceNodesTest, DuplicateNameIsAnErrorNamingTheNode) {
  ClusterState cluster;
  Status st =
      AddTraceNodes({{"n0", 1000, 1024, 1, "T4", 0}, {"n0", 1000, 1024, 1, "T4", 0}}, &cluster);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), "\"n0\""));
}

// ---------------------------------------------------------------- hostile input

const char kBom[] = "\xEF\xBB\xBF";

TEST(CsvHardeningTest, ByteOrderMarkIsIgnoredInEveryForm) {
  auto nodes = Must(ParseNodeCsv(std::string(kBom) + kNodeHeader + "n0,1000,2048,1,T4\n", "n.csv"));
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].name, "n0");
  auto pods =
      Must(ParsePodCsv(std::string(kBom) + kShortPodHeader + "p0,1000,1024,1,1000\n", "p.csv"));
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0].name, "p0");
  auto jobs =
      Must(ParseJobCsv(std::string(kBom) + "name,submit_time,duration,gpus_per_pod,cpu,memory\n"
                                           "j,0,60,1,1,1Gi\n",
                       "j.csv"));
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].name, "j");
}

TEST(CsvHardeningTest, NodeListWithoutHeaderNamesLineOneAndTheHeader) {
  auto nodes = ParseNodeCsv("n0,64000,262144,2,P100\nn1,64000,262144,2,P100\n", "nodes.csv");
  ASSERT_FALSE(nodes.ok());
  EXPECT_TRUE(StartsWith(nodes.status().message(), "nodes.csv:1:")) << nodes.status().message();
  EXPECT_TRUE(Contains(nodes.status().message(), "sn,cpu_milli,memory_mib,gpu,model"));
  EXPECT_TRUE(Contains(nodes.status().message(), "\"n0,64000,262144,2,P100\""));
}

TEST(CsvHardeningTest, DuplicateNamesNameBothLines) {
  auto nodes =
      ParseNodeCsv(std::string(kNodeHeader) + "n0,1,1,0,\nn1,1,1,0,\nn0,1,1,0,\n", "nodes.csv");
  ASSERT_FALSE(nodes.ok());
  EXPECT_TRUE(StartsWith(nodes.status().message(), "nodes.csv:4:1: sn: "))
      << nodes.status().message();
  EXPECT_TRUE(Contains(nodes.status().message(), "node \"n0\" is defined twice (first on line 2)"));
  auto pods = ParsePodCsv(std::string(kShortPodHeader) + "p0,1,1,0,0\np0,1,1,0,0\n", "pods.csv");
  ASSERT_FALSE(pods.ok());
  EXPECT_TRUE(StartsWith(pods.status().message(), "pods.csv:3:1: name: "))
      << pods.status().message();
  EXPECT_TRUE(Contains(pods.status().message(), "pod \"p0\" is defined twice (first on line 2)"));
}

TEST(CsvHardeningTest, NamesLongerThanTheLimitAreRefusedWithoutEchoingThem) {
  const std::string ok_name(kMaxNameLength, 'a');
  const std::string long_name(kMaxNameLength + 1, 'a');
  const std::string huge(10'000'000, 'x');  // a 10 MB pod name
  EXPECT_TRUE(
      ParseNodeCsv(std::string(kNodeHeader) + ok_name + ",1,1,1," + ok_name + "\n", "n.csv").ok());
  struct Case {
    std::string what, text, prefix;
    Result<int> (*parse)(const std::string&);
  };
  auto node = [](const std::string& t) -> Result<int> {
    auto r = ParseNodeCsv(t, "n.csv");
    return r.ok() ? Result<int>(0) : Result<int>(r.status());
  };
  auto pod = [](const std::string& t) -> Result<int> {
    auto r = ParsePodCsv(t, "p.csv");
    return r.ok() ? Result<int>(0) : Result<int>(r.status());
  };
  auto job = [](const std::string& t) -> Result<int> {
    auto r = ParseJobCsv(t, "j.csv");
    return r.ok() ? Result<int>(0) : Result<int>(r.status());
  };
  const std::string job_header =
      "submit_time,duration,gpus_per_pod,cpu,memory,name,queue,gpu_model\n";
  const Case cases[] = {
      {"node name", std::string(kNodeHeader) + long_name + ",1,1,1,T4\n", "n.csv:2:1: sn", node},
      {"GPU model", std::string(kNodeHeader) + "n0,1,1,1," + long_name + "\n", "n.csv:2:5: model",
       node},
      {"pod name", std::string(kShortPodHeader) + long_name + ",1,1,0,0\n", "p.csv:2:1: name", pod},
      {"10 MB pod name", std::string(kShortPodHeader) + huge + ",1,1,0,0\n", "p.csv:2:1: name",
       pod},
      {"gpu_spec model", LongRow("p,1,1,1,1000,T4|" + long_name + ",LS,Running,0,,"),
       "p.csv:2:6: gpu_spec", pod},
      {"job name", job_header + "0,1,1,1,1Gi," + long_name + ",,\n", "j.csv:2:6: name", job},
      {"queue name", job_header + "0,1,1,1,1Gi,j," + long_name + ",\n", "j.csv:2:7: queue", job},
      {"gpu_model", job_header + "0,1,1,1,1Gi,j,q," + long_name + "\n", "j.csv:2:8: gpu_model",
       job},
  };
  for (const Case& c : cases) {
    auto r = c.parse(c.text);
    ASSERT_FALSE(r.ok()) << c.what;
    const std::string& m = r.status().message();
    EXPECT_TRUE(StartsWith(m, c.prefix)) << c.what << ": " << m.substr(0, 300);
    EXPECT_TRUE(Contains(m, "limit of " + std::to_string(kMaxNameLength)))
        << c.what << ": " << m.substr(0, 300);
    EXPECT_LT(m.size(), 400u) << c.what << ": the message echoes the whole value";
  }
}

TEST(CsvHardeningTest, ControlCharactersInNamesAreRefused) {
  auto nodes = ParseNodeCsv(std::string(kNodeHeader) +
                                "n\x01"
                                "0,1,1,0,\n",
                            "n.csv");
  ASSERT_FALSE(nodes.ok());
  EXPECT_TRUE(StartsWith(nodes.status().message(), "n.csv:2:1: sn")) << nodes.status().message();
  auto pods = ParsePodCsv(std::string(kShortPodHeader) + "p\t0,1,1,0,0\n", "p.csv");
  ASSERT_FALSE(pods.ok());
  EXPECT_TRUE(StartsWith(pods.status().message(), "p.csv:2:1: name")) << pods.status().message();
}

TEST(CsvHardeningTest, MoreNodesThanTheLimitAreRefusedAtTheRow) {
  std::string text = kNodeHeader;
  for (int64_t i = 0; i <= kMaxNodes; ++i) text += "n" + std::to_string(i) + ",1,1,0,\n";
  auto nodes = ParseNodeCsv(text, "n.csv");
  ASSERT_FALSE(nodes.ok());
  EXPECT_TRUE(StartsWith(nodes.status().message(), "n.csv:" + std::to_string(kMaxNodes + 2) + ":"))
      << nodes.status().message();
  EXPECT_TRUE(Contains(nodes.status().message(), "limit of " + std::to_string(kMaxNodes)));
}

TEST(CsvHardeningTest, RowsAreCountedAsTheCursorReadsThem) {
  // Header, a blank line, CRLF rows, a lone "\r": rows 1, 2, 3 are on lines 3, 4, 6.
  const std::string text = std::string(kBom) + "h\n\nr1\r\nr2\n\r\nr3\n";
  EXPECT_EQ(csv::CountRows(text, 10).rows, 3);
  EXPECT_EQ(csv::CountRows(text, 10).line_past_limit, 0);
  EXPECT_EQ(csv::CountRows(text, 2).rows, 3);
  EXPECT_EQ(csv::CountRows(text, 2).line_past_limit, 6);
  EXPECT_EQ(csv::CountRows(text, 0).line_past_limit, 3);
  EXPECT_EQ(csv::CountRows("", 0).rows, 0);
}

TEST(CsvHardeningTest, MorePodsThanTheLimitAreRefusedAtTheRow) {
  std::string text = kShortPodHeader;
  text.reserve(static_cast<size_t>(kMaxTasks) * 16);
  for (int64_t i = 0; i <= kMaxTasks; ++i) text += "p" + std::to_string(i) + ",1,1,0,0\n";
  auto pods = ParsePodCsv(text, "p.csv");
  ASSERT_FALSE(pods.ok());
  EXPECT_TRUE(StartsWith(pods.status().message(), "p.csv:" + std::to_string(kMaxTasks + 2) + ":"))
      << pods.status().message();
  EXPECT_TRUE(Contains(pods.status().message(), "limit of " + std::to_string(kMaxTasks)));
}

TEST(CsvHardeningTest, JobPodsAboveTheLimitsAreRefused) {
  const std::string header = "submit_time,duration,pods,gpus_per_pod,cpu,memory\n";
  auto one =
      ParseJobCsv(header + "0,60," + std::to_string(kMaxTasksPerJob + 1) + ",1,1,1Gi\n", "j.csv");
  ASSERT_FALSE(one.ok());
  EXPECT_TRUE(StartsWith(one.status().message(), "j.csv:2:3: pods")) << one.status().message();
  EXPECT_TRUE(Contains(one.status().message(), std::to_string(kMaxTasksPerJob)));
  std::string many = header;
  for (int i = 0; i < 3; ++i) many += "0,60," + std::to_string(kMaxTasksPerJob) + ",1,1,1Gi\n";
  auto total = ParseJobCsv(many, "j.csv");
  ASSERT_FALSE(total.ok());
  EXPECT_TRUE(StartsWith(total.status().message(), "j.csv:4:3: pods")) << total.status().message();
  EXPECT_TRUE(Contains(total.status().message(), "limit of " + std::to_string(kMaxTasks)));
}

TEST(CsvHardeningTest, GpuFractionFinerThanAMilliIsAnError) {
  for (const char* fraction : {"1e-9", "0.0005", "0.2505"}) {
    auto jobs = ParseJobCsv(JobRow(std::string("0,60,0,") + fraction + ",4,1Gi"), "jobs.csv");
    ASSERT_FALSE(jobs.ok()) << fraction << " became " << (jobs.ok() ? jobs->front().gpu_milli : 0);
    EXPECT_TRUE(StartsWith(jobs.status().message(), "jobs.csv:2:4: gpu_fraction"))
        << jobs.status().message();
    EXPECT_TRUE(Contains(jobs.status().message(), fraction));
  }
  auto milli = Must(ParseJobCsv(JobRow("0,60,0,0.001,4,1Gi"), "jobs.csv"));
  EXPECT_EQ(milli[0].gpu_milli, 1);
}

TEST(CsvHardeningTest, QuotedCellsAreRefused) {
  auto nodes = ParseNodeCsv(std::string(kNodeHeader) + "\"n0\",1,1,0,\n", "n.csv");
  ASSERT_FALSE(nodes.ok());
  EXPECT_TRUE(StartsWith(nodes.status().message(), "n.csv:2:1: ")) << nodes.status().message();
  EXPECT_TRUE(Contains(nodes.status().message(), "quot"));
}

TEST(CsvHardeningTest, AMillionCommasAreCountedNotKept) {
  auto nodes =
      ParseNodeCsv(std::string(kNodeHeader) + "n0" + std::string(1'000'000, ',') + "\n", "n.csv");
  ASSERT_FALSE(nodes.ok());
  EXPECT_TRUE(StartsWith(nodes.status().message(), "n.csv:2:1: ")) << nodes.status().message();
  EXPECT_TRUE(Contains(nodes.status().message(), "expected 5 columns, got 1000001"));
}

TEST(CsvHardeningTest, GpuCountsFollowTheGpusPerNodeLimit) {
  const std::string max = std::to_string(kMaxGpusPerNode),
                    above = std::to_string(kMaxGpusPerNode + 1);
  const std::string range = "out of range [0, " + max + "]";
  EXPECT_TRUE(ParseNodeCsv(std::string(kNodeHeader) + "n0,1,1," + max + ",T4\n", "n.csv").ok());
  auto node = ParseNodeCsv(std::string(kNodeHeader) + "n0,1,1," + above + ",T4\n", "n.csv");
  ASSERT_FALSE(node.ok());
  EXPECT_TRUE(Contains(node.status().message(), range)) << node.status().message();
  auto pod = ParsePodCsv(ShortRow("p,1,1," + above + ",1000"), "p.csv");
  ASSERT_FALSE(pod.ok());
  EXPECT_TRUE(Contains(pod.status().message(), range)) << pod.status().message();
  auto job = ParseJobCsv(JobRow("0,60," + above + ",,4,1Gi"), "j.csv");
  ASSERT_FALSE(job.ok());
  EXPECT_TRUE(Contains(job.status().message(), range)) << job.status().message();
}

TEST(CsvHardeningTest, GpuModelsOnRowsWithoutGpusAndEmptyModelsAreErrors) {
  auto cpu_node = ParseNodeCsv(std::string(kNodeHeader) + "n0,1,1,0,T4\n", "n.csv");
  ASSERT_FALSE(cpu_node.ok());
  EXPECT_TRUE(StartsWith(cpu_node.status().message(), "n.csv:2:5: model"))
      << cpu_node.status().message();
  auto cpu_pod = ParsePodCsv(LongRow("p,1,1,0,0,T4,LS,Running,0,,"), "p.csv");
  ASSERT_FALSE(cpu_pod.ok());
  EXPECT_TRUE(StartsWith(cpu_pod.status().message(), "p.csv:2:6: gpu_spec"))
      << cpu_pod.status().message();
  auto empty_model = ParsePodCsv(LongRow("p,1,1,1,1000,T4||V100,LS,Running,0,,"), "p.csv");
  ASSERT_FALSE(empty_model.ok());
  EXPECT_TRUE(StartsWith(empty_model.status().message(), "p.csv:2:6: gpu_spec"))
      << empty_model.status().message();
  const std::string header = "submit_time,duration,gpus_per_pod,cpu,memory,gpu_model\n";
  auto cpu_job = ParseJobCsv(header + "0,60,0,1,1Gi,T4\n", "j.csv");
  ASSERT_FALSE(cpu_job.ok());
  EXPECT_TRUE(StartsWith(cpu_job.status().message(), "j.csv:2:6: gpu_model"))
      << cpu_job.status().message();
  auto bar_only = ParseJobCsv(header + "0,60,1,1,1Gi,|\n", "j.csv");
  ASSERT_FALSE(bar_only.ok());
  EXPECT_TRUE(StartsWith(bar_only.status().message(), "j.csv:2:6: gpu_model"))
      << bar_only.status().message();
}

TEST(CsvHardeningTest, TimesBeyondTheTraceLimitAreRefused) {
  const std::string far = "1000000000001";  // past 10^12 s (31,700 years)
  auto creation = ParsePodCsv(LongRow("p,1,1,0,0,,LS,Running," + far + ",,"), "p.csv");
  ASSERT_FALSE(creation.ok());
  EXPECT_TRUE(StartsWith(creation.status().message(), "p.csv:2:9: creation_time"))
      << creation.status().message();
  auto submit = ParseJobCsv(JobRow(far + ",60,1,,4,1Gi"), "j.csv");
  ASSERT_FALSE(submit.ok());
  EXPECT_TRUE(StartsWith(submit.status().message(), "j.csv:2:1: submit_time"))
      << submit.status().message();
  auto duration = ParseJobCsv(JobRow("0," + far + ",1,,4,1Gi"), "j.csv");
  ASSERT_FALSE(duration.ok());
  EXPECT_TRUE(StartsWith(duration.status().message(), "j.csv:2:2: duration"))
      << duration.status().message();
}

TEST(CsvHardeningTest, LongBadNumbersAreQuotedShort) {
  auto nodes = ParseNodeCsv(
      std::string(kNodeHeader) + "n0," + std::string(1'000'000, '9') + ",1,0,\n", "n.csv");
  ASSERT_FALSE(nodes.ok());
  EXPECT_TRUE(StartsWith(nodes.status().message(), "n.csv:2:2: cpu_milli"))
      << nodes.status().message().substr(0, 200);
  EXPECT_LT(nodes.status().message().size(), 300u);
}

TEST(AddTraceNodesTest, RefusesWhatTheCsvReaderWould) {
  ClusterState cluster;
  Status gpus = AddTraceNodes({{"n0", 1000, 1024, kMaxGpusPerNode + 1, "T4"}}, &cluster);
  ASSERT_FALSE(gpus.ok());
  EXPECT_TRUE(Contains(gpus.message(), std::to_string(kMaxGpusPerNode))) << gpus.message();
  Status memory = AddTraceNodes({{"n1", 1000, INT64_MAX / 1000, 0, ""}}, &cluster);
  ASSERT_FALSE(memory.ok());
  EXPECT_TRUE(Contains(memory.message(), "memory")) << memory.message();
  Status name =
      AddTraceNodes({{std::string(kMaxNameLength + 1, 'n'), 1000, 1024, 0, ""}}, &cluster);
  ASSERT_FALSE(name.ok());
  EXPECT_TRUE(Contains(name.message(), std::to_string(kMaxNameLength))) << name.message();
  EXPECT_TRUE(cluster.nodes().empty());
}

TEST(AddTraceNodesTest, RefusesMoreNodesThanTheLimit) {
  std::vector<TraceNode> nodes;
  for (int64_t i = 0; i <= kMaxNodes; ++i)
    nodes.push_back({"n" + std::to_string(i), 1000, 1024, 0, ""});
  ClusterState cluster;
  Status st = AddTraceNodes(nodes, &cluster);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), "limit of " + std::to_string(kMaxNodes))) << st.message();
}

TEST(WorkloadCsvTest, APodListWithAByteOrderMarkIsAPodList) {
  auto w = Must(
      ParseWorkloadCsv(std::string(kBom) + kShortPodHeader + "p0,1000,1024,1,1000\n", "w.csv"));
  ASSERT_EQ(w.pods.size(), 1u);
  EXPECT_TRUE(w.jobs.empty());
  EXPECT_EQ(w.pods[0].name, "p0");
  auto long_form = Must(ParseWorkloadCsv(
      std::string(kBom) + kPodHeader + "p0,1000,1024,1,1000,,LS,Running,0,,\n", "w.csv"));
  ASSERT_EQ(long_form.pods.size(), 1u);
}

TEST(WorkloadCsvTest, AJobCsvIsAJobCsvEvenWhenItStartsWithName) {
  auto w = Must(ParseWorkloadCsv(std::string(kBom) +
                                     "name,submit_time,duration,gpus_per_pod,cpu,memory\n"
                                     "j,0,60,1,1,1Gi\n",
                                 "w.csv"));
  ASSERT_EQ(w.jobs.size(), 1u);
  EXPECT_TRUE(w.pods.empty());
}

TEST(WorkloadCsvTest, ARowWithoutAHeaderNamesLineOneAndBothHeaders) {
  auto w = ParseWorkloadCsv("p0,1000,1024,1,1000\n", "w.csv");
  ASSERT_FALSE(w.ok());
  EXPECT_TRUE(StartsWith(w.status().message(), "w.csv:1:1: ")) << w.status().message();
  EXPECT_TRUE(Contains(w.status().message(), "submit_time"));
  EXPECT_TRUE(Contains(w.status().message(), "name,cpu_milli,memory_mib,num_gpu,gpu_milli"));
}

TEST(WorkloadCsvTest, AMissingFileIsNotFound) {
  auto w = ReadWorkloadCsv("/nonexistent/dir/w.csv");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), Status::Code::kNotFound);
  EXPECT_TRUE(Contains(w.status().message(), "/nonexistent/dir/w.csv"));
}

TEST(LooksLikeCsvTest, TellsNodeListsFromScenarios) {
  EXPECT_TRUE(LooksLikeCsv(kNodeHeader));
  EXPECT_TRUE(LooksLikeCsv(std::string(kBom) + kNodeHeader));
  EXPECT_TRUE(LooksLikeCsv("\n\r\n  n0,64000,262144,2,P100\n"));
  EXPECT_FALSE(LooksLikeCsv("# nodes: a, b\nnodes: []\n"));
  EXPECT_FALSE(LooksLikeCsv("name: x\nnodes: [a, b]\n"));
  EXPECT_FALSE(LooksLikeCsv("---\nname: x\n"));
  EXPECT_FALSE(LooksLikeCsv("{name: x, nodes: []}\n"));
  EXPECT_FALSE(LooksLikeCsv("- a, b\n"));
  EXPECT_FALSE(LooksLikeCsv(""));
  EXPECT_FALSE(LooksLikeCsv("just words\n"));
}

TEST(AddTraceNodesTest, ErrorsNameTheSourceAndLine) {
  ClusterState cluster;
  TraceNode a{"n0", 1000, 1024, 1, "T4", 2};
  TraceNode b{"n0", 1000, 1024, 1, "T4", 7};
  Status st = AddTraceNodes({a, b}, &cluster, "nodes.csv");
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(StartsWith(st.message(), "nodes.csv:7: ")) << st.message();
  EXPECT_TRUE(Contains(st.message(), "node \"n0\" is defined twice"));
  ClusterState other;
  TraceNode bad{"n1", 1000, 1024, kMaxGpusPerNode + 1, "T4", 3};
  Status gpus = AddTraceNodes({bad}, &other, "nodes.csv");
  ASSERT_FALSE(gpus.ok());
  EXPECT_TRUE(StartsWith(gpus.message(), "nodes.csv:3: node \"n1\": gpus 257")) << gpus.message();
}

TEST(CheckTracePodTest, RefusesWhatTheReaderWould) {
  TracePod ok;
  ok.name = "p";
  ok.num_gpu = 1;
  ok.gpu_milli = 500;
  EXPECT_TRUE(CheckTracePod(ok).ok());
  struct Case {
    const char* what;
    void (*change)(TracePod&);
    const char* part;
  };
  const Case cases[] = {
      {"no name", [](TracePod& p) { p.name.clear(); }, "empty"},
      {"long name", [](TracePod& p) { p.name.assign(kMaxNameLength + 1, 'p'); }, "limit"},
      {"negative cpu", [](TracePod& p) { p.cpu_milli = -1; }, "cpu_milli -1"},
      {"memory past int64", [](TracePod& p) { p.memory_mib = INT64_MAX / 1000; }, "memory_mib"},
      {"GPUs past the limit", [](TracePod& p) { p.num_gpu = kMaxGpusPerNode + 1; }, "num_gpu 257"},
      {"share past 1000", [](TracePod& p) { p.gpu_milli = 1001; }, "gpu_milli 1001"},
      {"multi-GPU share", [](TracePod& p) { p.num_gpu = 2; }, "whole GPUs"},
      {"models on a CPU pod",
       [](TracePod& p) {
         p.num_gpu = 0;
         p.gpu_milli = 0;
         p.gpu_spec = {"T4"};
       },
       "gpu_spec"},
      {"empty model", [](TracePod& p) { p.gpu_spec = {""}; }, "gpu_spec"},
      {"deleted before created",
       [](TracePod& p) {
         p.has_times = true;
         p.creation_time = 10;
         p.deletion_time = 5;
       },
       "deletion_time"},
      {"far creation",
       [](TracePod& p) {
         p.has_times = true;
         p.creation_time = kMaxTraceSeconds + 1;
       },
       "creation_time"},
  };
  for (const Case& c : cases) {
    TracePod p = ok;
    p.line = 9;
    c.change(p);
    Status st = CheckTracePod(p);
    ASSERT_FALSE(st.ok()) << c.what;
    EXPECT_TRUE(Contains(st.message(), "(line 9)")) << c.what;
    EXPECT_TRUE(Contains(st.message(), c.part)) << c.what;
  }
}

// ---------------------------------------------------------------- the shipped traces
// Expected counts are from data/alibaba-gpu-v2023/README.md and the FGD notes, computed
// independently of this reader.

TEST(ShippedTraceTest, GpuNodeList) {
  auto nodes = Must(ReadNodeCsv(DataPath("openb_node_list_gpu_node.csv")));
  ASSERT_EQ(nodes.size(), 1213u);
  int64_t gpus = 0;
  for (const TraceNode& n : nodes) {
    EXPECT_GE(n.gpus, 1) << n.name;
    EXPECT_FALSE(n.model.empty()) << n.name;
    gpus += n.gpus;
  }
  EXPECT_EQ(gpus, 6212);

  ClusterState cluster;
  ASSERT_TRUE(AddTraceNodes(nodes, &cluster).ok());
  EXPECT_EQ(cluster.nodes().size(), 1213u);
  EXPECT_EQ(cluster.capacity().Get(kCpu), 107018000);
  EXPECT_EQ(cluster.capacity().Get(kGpu), 6212 * 1000);
}

TEST(ShippedTraceTest, DefaultPodList) {
  auto pods = Must(ReadPodCsv(DataPath("openb_pod_list_default.csv")));
  ASSERT_EQ(pods.size(), 8152u);
  std::map<int32_t, int64_t> by_gpus;
  int64_t shared = 0, demand = 0;
  for (const TracePod& p : pods) {
    EXPECT_TRUE(p.has_times);
    by_gpus[p.num_gpu]++;
    if (p.num_gpu == 1 && p.gpu_milli < 1000) ++shared;
    demand += static_cast<int64_t>(p.num_gpu) * p.gpu_milli;
  }
  EXPECT_EQ(by_gpus, (std::map<int32_t, int64_t>{{0, 1088}, {1, 6989}, {2, 16}, {4, 15}, {8, 44}}));
  EXPECT_EQ(shared, 3078);
  EXPECT_EQ(demand, 6086800);  // 97.98 % of 6212 GPUs (FGD notes, section 2)
  EXPECT_EQ(pods.front().name, "openb-pod-0000");
  EXPECT_EQ(pods.front().line, 2);
  EXPECT_EQ(pods.back().line, 8153);
}

TEST(ShippedTraceTest, FiveColumnMultiGpuPodList) {
  auto pods = Must(ReadPodCsv(DataPath("openb_pod_list_multigpu50.csv")));
  ASSERT_EQ(pods.size(), 9061u);
  for (const TracePod& p : pods) {
    ASSERT_FALSE(p.has_times) << p.name;
  }
}

}  // namespace
}  // namespace gantry

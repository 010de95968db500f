/* A master-worker simulator on SimGrid: a bag of tasks, all submitted at time 0, sent by a
   master to its workers over the platform's network, either round-robin (task i to worker
   i mod n, decided in advance) or first-idle (each task to the first worker that asks for
   one). Prints its metrics as key=value lines and writes one line per task to tasks.csv.

   masterworker PLATFORM --workers N --tasks T --flops F --spread S --bytes B
                [--bandwidth BPS] [--latency SECONDS] --strategy round-robin|first-idle
                --seed SEED [--out tasks.csv]

   Task sizes are uniform in F * [1 - S, 1 + S] (S = 0: equal tasks), drawn from the seed;
   --bandwidth and --latency, when given, replace those of every link of the platform. */
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

struct Task {
    int index;
    double flops;
    double bytes;
    int worker = -1;      // who computed it
    double start = -1.0;  // when its computation began
    double end = -1.0;    // when it was done: its response time, as it was submitted at 0
};

static std::vector<Task> tasks;
static Task stop{-1, 0.0, 0.0};  // tells a worker there is nothing more to do

static uint64_t state;

static double uniform() { /* splitmix64: the same numbers on every machine */
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}

static std::string mailbox_of(bool round_robin, int worker) {
    return round_robin ? "worker-" + std::to_string(worker) : std::string("tasks");
}

/* Posts every task at once; a task leaves when its worker asks for it (a rendez-vous). */
static void master(bool round_robin, int workers) {
    std::vector<sg4::CommPtr> sent;
    for (Task& task : tasks) {
        int worker = round_robin ? task.index % workers + 1 : 0;
        sent.push_back(sg4::Mailbox::by_name(mailbox_of(round_robin, worker))
                           ->put_async(&task, static_cast<uint64_t>(task.bytes)));
    }
    for (int worker = 1; worker <= workers; worker++)
        sent.push_back(sg4::Mailbox::by_name(mailbox_of(round_robin, worker))->put_async(&stop, 0));
    sg4::Comm::wait_all(sent);
}

static void worker(bool round_robin, int self) {
    sg4::Mailbox* mailbox = sg4::Mailbox::by_name(mailbox_of(round_robin, self));
    for (Task* task = mailbox->get<Task>(); task != &stop; task = mailbox->get<Task>()) {
        task->worker = self;
        task->start = sg4::Engine::get_clock();
        sg4::this_actor::execute(task->flops);
        task->end = sg4::Engine::get_clock();
    }
}

static void fail(const char* message, const char* value) {
    std::fprintf(stderr, "masterworker: %s%s\n", message, value);
    std::exit(2);
}

int main(int argc, char** argv) {
    sg4::Engine engine(&argc, argv);  // takes SimGrid's own --cfg and --log options
    if (argc < 2) fail("usage: masterworker PLATFORM --workers N ... (see the source)", "");
    int workers = 1, count = 100;
    double flops = 1e9, spread = 0.0, bytes = 0.0, bandwidth = -1.0, latency = -1.0;
    std::string strategy = "first-idle", out = "tasks.csv";
    for (int i = 2; i < argc; i += 2) {
        if (i + 1 >= argc) fail("no value after ", argv[i]);
        const char *name = argv[i], *value = argv[i + 1];
        if (!std::strcmp(name, "--workers")) workers = std::atoi(value);
        else if (!std::strcmp(name, "--tasks")) count = std::atoi(value);
        else if (!std::strcmp(name, "--flops")) flops = std::atof(value);
        else if (!std::strcmp(name, "--spread")) spread = std::atof(value);
        else if (!std::strcmp(name, "--bytes")) bytes = std::atof(value);
        else if (!std::strcmp(name, "--bandwidth")) bandwidth = std::atof(value);
        else if (!std::strcmp(name, "--latency")) latency = std::atof(value);
        else if (!std::strcmp(name, "--strategy")) strategy = value;
        else if (!std::strcmp(name, "--seed")) state = std::strtoull(value, nullptr, 10);
        else if (!std::strcmp(name, "--out")) out = value;
        else fail("unknown option ", name);
    }
    bool round_robin = strategy == "round-robin";
    if (!round_robin && strategy != "first-idle")
        fail("--strategy is round-robin or first-idle, not ", strategy.c_str());
    if (count < 1 || flops <= 0 || spread < 0 || spread >= 1 || bytes < 0)
        fail("--tasks >= 1, --flops > 0, 0 <= --spread < 1 and --bytes >= 0", "");

    if (workers < 1) fail("--workers is at least 1", "");

    engine.load_platform(argv[1]);
    sg4::Host* master_host = engine.host_by_name_or_null("master");
    if (master_host == nullptr) fail("the platform has no host named master: ", argv[1]);
    std::vector<sg4::Host*> hosts;
    for (int k = 1; k <= workers; k++) {
        std::string name = "worker-" + std::to_string(k);
        sg4::Host* host = engine.host_by_name_or_null(name);
        if (host == nullptr) fail("the platform has too few workers for --workers: no ", name.c_str());
        hosts.push_back(host);
    }
    for (sg4::Link* link : engine.get_all_links()) {
        if (bandwidth > 0) link->set_bandwidth(bandwidth);
        if (latency >= 0) link->set_latency(latency);
    }

    for (int i = 0; i < count; i++)
        tasks.push_back({i, flops * (1.0 + spread * (2.0 * uniform() - 1.0)), bytes});
    sg4::Actor::create("master", master_host, master, round_robin, workers);
    for (int k = 1; k <= workers; k++)
        sg4::Actor::create("worker-" + std::to_string(k), hosts[k - 1], worker, round_robin, k);
    engine.run();

    double makespan = 0.0, response = 0.0, busy = 0.0;
    std::FILE* csv = std::fopen(out.c_str(), "w");
    if (csv == nullptr) fail("cannot write ", out.c_str());
    std::fprintf(csv, "task,worker,flops,start,end,response\n");
    for (const Task& task : tasks) {
        makespan = std::max(makespan, task.end);
        response += task.end;
        busy += task.end - task.start;
        std::fprintf(csv, "%d,%d,%.17g,%.17g,%.17g,%.17g\n", task.index, task.worker,
                     task.flops, task.start, task.end, task.end);
    }
    std::fclose(csv);
    std::printf("simulated %d tasks on %d workers (%s)\n", count, workers, strategy.c_str());
    std::printf("makespan=%.17g\nmean_response=%.17g\nutilization=%.17g\n", makespan,
                response / count, busy / (workers * makespan));
    return 0;
}

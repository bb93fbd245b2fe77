#include "ns3_hold.h"

#include <ns3/nstime.h>
#include <ns3/object-factory.h>
#include <ns3/simulator.h>

namespace swarmlab::bench {
namespace {

struct Hold {
  std::uint64_t x = 1;
  std::uint64_t remaining = 0;
};

// A no-op event that schedules its successor (delays of 0 to ~1 s in whole microseconds).
void tick(Hold* h) {
  if (h->remaining == 0) return;
  --h->remaining;
  h->x = h->x * 6364136223846793005ull + 1442695040888963407ull;
  ns3::Simulator::Schedule(ns3::MicroSeconds(static_cast<std::int64_t>(h->x >> 44)), &tick, h);
}

}  // namespace

const char* ns3_scheduler_name(Ns3Scheduler scheduler) {
  switch (scheduler) {
    case Ns3Scheduler::Map: return "ns3::MapScheduler";
    case Ns3Scheduler::Heap: return "ns3::HeapScheduler";
    case Ns3Scheduler::Calendar: return "ns3::CalendarScheduler";
  }
  return "?";
}

std::uint64_t ns3_hold(Ns3Scheduler scheduler, std::uint32_t population, std::uint64_t events) {
  ns3::ObjectFactory factory;
  factory.SetTypeId(ns3_scheduler_name(scheduler));
  ns3::Simulator::SetScheduler(factory);
  Hold h;
  h.remaining = events > population ? events - population : 0;
  for (std::uint32_t i = 0; i < population; ++i) ns3::Simulator::Schedule(ns3::MicroSeconds(i), &tick, &h);
  ns3::Simulator::Run();
  const std::uint64_t executed = ns3::Simulator::GetEventCount();
  ns3::Simulator::Destroy();
  return executed;
}

}  // namespace swarmlab::bench

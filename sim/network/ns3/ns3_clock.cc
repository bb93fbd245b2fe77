#include "sim/network/ns3/ns3_clock.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include <ns3/core-module.h>

namespace swarmlab::sim {
namespace {

bool g_clock_alive = false;  // ns-3's simulator is one per process

void halt() { ns3::Simulator::Stop(); }

}  // namespace

Ns3Clock::Ns3Clock(Engine& engine, std::function<bool()> has_work) : engine_(engine), has_work_(std::move(has_work)) {
  if (g_clock_alive) throw std::logic_error("ns3 backend: only one ns-3 network may exist at a time in a process");
  g_clock_alive = true;
  // A binary heap is the fastest of ns-3's schedulers for TCP's insert-and-cancel-heavy event mix.
  ns3::Simulator::SetScheduler(ns3::ObjectFactory("ns3::HeapScheduler"));
  engine_.set_external(this);
}

Ns3Clock::~Ns3Clock() {
  engine_.set_external(nullptr);
  ns3::Simulator::Destroy();
  g_clock_alive = false;
}

std::int64_t Ns3Clock::to_ns(Seconds t) {
  constexpr double kMax = 9.0e18;  // ~285 years: beyond any run
  const double ns = std::round(t * 1e9);
  return ns >= kMax ? static_cast<std::int64_t>(kMax) : static_cast<std::int64_t>(ns);
}

Seconds Ns3Clock::now() const { return static_cast<double>(ns3::Simulator::Now().GetNanoSeconds()) * 1e-9; }

std::uint64_t Ns3Clock::events() const { return ns3::Simulator::GetEventCount(); }

void Ns3Clock::run_until(Seconds t) {
  if (std::isinf(t)) {
    // Nothing in the engine: ns-3 alone decides what happens next, if anything is owed.
    if (!has_work_()) return;
    running_ = true;
    ns3::Simulator::Run();  // returns at the first post() or when ns-3 has no events left
    running_ = false;
    return;
  }
  const std::int64_t now = ns3::Simulator::Now().GetNanoSeconds();
  const std::int64_t target = to_ns(t);
  if (target <= now && ns3::Simulator::IsFinished()) return;
  // A stop event at t leaves ns-3's clock exactly at t unless a post() stops it earlier.
  ns3::EventId stop = ns3::Simulator::Schedule(ns3::NanoSeconds(target > now ? target - now : 0), &halt);
  running_ = true;
  ns3::Simulator::Run();
  running_ = false;
  if (!ns3::Simulator::IsExpired(stop)) ns3::Simulator::Cancel(stop);
}

void Ns3Clock::post_at(Seconds t, std::function<void()> fn) {
  engine_.at(t, std::move(fn));
  // ns-3 may be running towards a later engine event; stop it so this one takes its place.
  if (running_) ns3::Simulator::Stop();
}

}  // namespace swarmlab::sim

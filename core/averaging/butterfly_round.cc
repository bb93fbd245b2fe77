#include "core/averaging/butterfly_round.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include <Eigen/Core>

#include "core/averaging/centered_clip.h"
#include "core/wire.h"

namespace swarmlab::core::averaging {
namespace {
// The reduction arithmetic, in Eigen (tests/bench/averaging_bench.cc: faster than the plain
// loops, same bits: one rounding per multiplication and per addition, no FMA).
using FloatArray = Eigen::Map<Eigen::ArrayXf>;
using ConstFloatArray = Eigen::Map<const Eigen::ArrayXf>;
Eigen::Index length(std::size_t n) { return static_cast<Eigen::Index>(n); }

// sum = w · x
void scale_into(float* sum, float w, const float* x, std::size_t n) {
  FloatArray(sum, length(n)) = w * ConstFloatArray(x, length(n));
}
// sum += w · x
void accumulate(float* sum, float w, const float* x, std::size_t n) {
  FloatArray(sum, length(n)) += w * ConstFloatArray(x, length(n));
}
// out = float(sum · inv), the product in double
void normalise(float* out, const float* sum, double inv, std::size_t n) {
  FloatArray(out, length(n)) = (ConstFloatArray(sum, length(n)).cast<double>() * inv).cast<float>();
}
}  // namespace

ButterflyRound::ButterflyRound(Environment& env, RoundPlan plan, std::span<float> values, Timeouts timeouts, Done done,
                               ReduceCost cost)
    : env_(env), plan_(std::move(plan)), values_(values), timeouts_(timeouts), done_(std::move(done)), cost_(cost) {
  plan_.validate();
  const auto me = plan_.index_of(env_.self());
  if (!me) throw std::invalid_argument("butterfly round: this peer is not a member of the plan");
  me_ = *me;
  if (!values_.empty() && values_.size() != plan_.length())
    throw std::invalid_argument("butterfly round: vector length " + std::to_string(values_.size()) +
                                " does not match the plan's " + std::to_string(plan_.length()));
}

ButterflyRound::~ButterflyRound() {
  env_.cancel(round_timer_);
  for (const auto& acc : accumulators_) env_.cancel(acc.reply_timer);
  for (auto& s : senders_) env_.cancel(s.watchdog);
  for (auto& r : reducers_) env_.cancel(r.watchdog);
}

void ButterflyRound::start() {
  if (started_) return;
  started_ = true;
  started_at_ = env_.now();
  const std::size_t n = plan_.size();
  senders_.assign(n, SenderState{});
  reducers_.assign(n, ReducerState{});

  // Reducer side: my span, with my own contribution added locally.
  my_parts_ = plan_.parts_in_span(me_);
  accumulators_.assign(my_parts_, PartAccumulator{});
  if (my_parts_ > 0) {
    if (carries_values() && !clips()) sums_.assign(plan_.span_length(me_), 0.0f);
    if (plan_.sends(me_)) {
      const double w = plan_.weights[me_];
      for (std::uint32_t k = 0; k < my_parts_; ++k) {
        std::span<const float> mine;
        if (carries_values()) mine = std::span<const float>(values_).subspan(plan_.part_first(me_, k), plan_.part_count(me_, k));
        add_contribution(k, me_, w, mine);
      }
    }
    for (std::size_t s = 0; s < n; ++s) {
      if (s == me_ || !plan_.sends(s)) continue;
      senders_[s].last_heard = started_at_;
      arm_sender_watchdog(s);
    }
  }

  set_pacing(true);
  // Sender side: stream my parts of every other member's span.
  if (plan_.sends(me_)) {
    for (std::size_t j = 0; j < n; ++j) {
      if (j == me_ || plan_.span_length(j) == 0) continue;
      reducers_[j].last_heard = started_at_;
      arm_reducer_watchdog(j);
    }
    send_parts();
  }

  if (std::isfinite(timeouts_.round))
    round_timer_ = env_.schedule(timeouts_.round, [this] {
      round_timer_ = 0;
      if (!finished_) finish(false);
    });

  for (std::uint32_t k = 0; k < my_parts_; ++k) try_finalize(k);
  maybe_finish();
}

void ButterflyRound::send_parts() {
  const bool is_virtual = !carries_values();
  for (std::size_t j = 0; j < plan_.size(); ++j) {
    if (j == me_) continue;
    const std::uint32_t parts = plan_.parts_in_span(j);
    for (std::uint32_t k = 0; k < parts; ++k) {
      PartHeader h;
      h.kind = PartKind::Part;
      h.round_id = plan_.round_id;
      h.part = k;
      h.weight = plan_.weights[me_];
      h.elements = static_cast<std::uint32_t>(plan_.part_count(j, k));
      h.codec = plan_.codec;
      std::span<const float> slice;
      if (!is_virtual) slice = std::span<const float>(values_.data() + plan_.part_first(j, k), h.elements);
      env_.send(plan_.members[j], encode_part(h, slice, is_virtual));
    }
  }
}

void ButterflyRound::on_part(PeerId from, const DecodedPart& part) {
  if (!started_ || finished_) return;
  const auto member = plan_.index_of(from);
  if (!member || *member == me_ || part.header.round_id != plan_.round_id || part.header.codec != plan_.codec ||
      part.has_payload != carries_values()) {
    ++rejected_;
    return;
  }
  if (part.header.kind == PartKind::Part)
    on_contribution(*member, part);
  else
    on_averaged(*member, part);
}

void ButterflyRound::on_contribution(std::size_t s, const DecodedPart& part) {
  SenderState& st = senders_[s];
  const std::uint32_t k = part.header.part;
  // The weight travels in each part: the plan says who sends, but a sender's weight (the samples
  // behind its gradient) is known only to itself when the round starts (training,
  // docs/dedloc.md §1).
  const double weight = part.header.weight;
  if (!plan_.sends(s) || st.dropped || k != st.received || k >= my_parts_ ||
      part.header.elements != plan_.part_count(me_, k) || !(weight > 0) || !std::isfinite(weight)) {
    ++rejected_;
    return;
  }
  std::vector<float> x;
  if (carries_values()) {
    x.resize(part.header.elements);
    try {
      codec::decode(plan_.codec, part.payload, x);
    } catch (const DecodeError&) {
      ++rejected_;
      return;
    }
  }
  add_contribution(k, s, weight, x);
  ++st.received;
  st.last_heard = env_.now();
  if (st.received == my_parts_) {
    env_.cancel(st.watchdog);
    st.watchdog = 0;
  }
  try_finalize(k);
  maybe_finish();
}

void ButterflyRound::on_averaged(std::size_t j, const DecodedPart& part) {
  ReducerState& st = reducers_[j];
  const std::uint32_t k = part.header.part;
  if (!plan_.sends(me_) || st.dropped || k != st.received || k >= plan_.parts_in_span(j) ||
      part.header.elements != plan_.part_count(j, k)) {
    ++rejected_;
    return;
  }
  if (carries_values()) {
    try {
      codec::decode(plan_.codec, part.payload, values_.subspan(plan_.part_first(j, k), part.header.elements));
    } catch (const DecodeError&) {
      ++rejected_;
      return;
    }
  }
  ++st.received;
  st.last_heard = env_.now();
  averaged_elements_ += part.header.elements;
  if (st.received == plan_.parts_in_span(j)) {
    env_.cancel(st.watchdog);
    st.watchdog = 0;
  }
  maybe_finish();
}

void ButterflyRound::add_contribution(std::uint32_t k, std::size_t member, double weight, std::span<const float> x) {
  PartAccumulator& acc = accumulators_[k];
  acc.weight += weight;
  ++acc.contributions;
  if (!carries_values()) return;
  if (clips()) {
    acc.rows.insert(acc.rows.end(), x.begin(), x.end());
    acc.row_senders.emplace_back(member, weight);
    return;
  }
  float* sum = sums_.data() + (plan_.part_first(me_, k) - plan_.span_begin[me_]);
  if (member == me_)  // a reducer's own contribution comes first (start())
    scale_into(sum, static_cast<float>(weight), x.data(), x.size());
  else
    accumulate(sum, static_cast<float>(weight), x.data(), x.size());
}

void ButterflyRound::aggregate(std::uint32_t k, std::span<float> out) {
  PartAccumulator& acc = accumulators_[k];
  if (!clips()) {
    normalise(out.data(), sums_.data() + (plan_.part_first(me_, k) - plan_.span_begin[me_]), 1.0 / acc.weight, out.size());
    return;
  }
  // In member order, so the result does not depend on the order parts arrived in.
  const std::size_t n = acc.row_senders.size(), len = out.size();
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return acc.row_senders[a].first < acc.row_senders[b].first; });
  std::vector<float> rows(n * len);
  std::vector<double> weights(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::copy_n(acc.rows.begin() + static_cast<std::ptrdiff_t>(order[i] * len), len, rows.begin() + static_cast<std::ptrdiff_t>(i * len));
    weights[i] = acc.row_senders[order[i]].second;
  }
  clipped_ += centered_clip(rows, weights, *plan_.clip, out);
  acc.rows = {};
  acc.row_senders = {};
}

std::uint32_t ButterflyRound::expected_contributions(std::uint32_t part) const {
  // Every sender still in the round, plus dropped senders that delivered this part before leaving.
  std::uint32_t expected = plan_.sends(me_) ? 1 : 0;
  for (std::size_t s = 0; s < plan_.size(); ++s) {
    if (s == me_ || !plan_.sends(s)) continue;
    if (!senders_[s].dropped || senders_[s].received > part) ++expected;
  }
  return expected;
}

void ButterflyRound::try_finalize(std::uint32_t k) {
  if (k < accumulators_.size() && !accumulators_[k].finalized && accumulators_[k].contributions >= expected_contributions(k))
    finalize(k);
}

void ButterflyRound::finalize(std::uint32_t k) {
  PartAccumulator& acc = accumulators_[k];
  acc.finalized = true;
  ++finalized_parts_;
  const auto count = static_cast<std::uint32_t>(plan_.part_count(me_, k));
  const Seconds cost = plan_.clip ? cost_.of_clip(count, acc.contributions, plan_.clip->iterations) : 0;
  const std::string what = "part " + std::to_string(k) + " of round " + std::to_string(plan_.round_id);
  if (acc.weight <= 0) {  // every sender of this part was dropped: nothing to average
    env_.trace("reduce", what, env_.now(), env_.now());
    return;
  }

  std::vector<float> average;
  if (carries_values()) {
    average.resize(count);
    aggregate(k, average);
  }
  PartHeader h;
  h.kind = PartKind::Averaged;
  h.round_id = plan_.round_id;
  h.part = k;
  h.weight = acc.weight;
  h.elements = count;
  h.codec = plan_.codec;
  Message averaged = encode_part(h, average, !carries_values());
  if (!(cost > 0)) {
    env_.trace("reduce", what, env_.now(), env_.now());
    reply(k, averaged);
    return;
  }
  // The clip's processor time: parts are clipped one after another, each reply leaving when its
  // clip is done. The values are computed now; only their departure waits.
  const Seconds begin = std::max(busy_until_, env_.now());
  busy_until_ = begin + cost;
  env_.trace("reduce", what, begin, busy_until_);
  ++waiting_replies_;
  acc.reply_timer = env_.schedule_at(busy_until_, [this, k, averaged = std::move(averaged)] {
    accumulators_[k].reply_timer = 0;
    --waiting_replies_;
    reply(k, averaged);
    maybe_finish();
  });
}

void ButterflyRound::reply(std::uint32_t k, const Message& averaged) {
  for (std::size_t s = 0; s < plan_.size(); ++s) {
    if (s == me_ || !plan_.sends(s) || senders_[s].dropped) continue;
    env_.send(plan_.members[s], averaged);
  }
  if (plan_.sends(me_)) {
    // Keep what the other members receive, the wire's rounding included, so that every member
    // ends the round with bit-identical values (docs/interpretations.md §25).
    const std::uint64_t first = plan_.part_first(me_, k);
    const std::uint64_t count = plan_.part_count(me_, k);
    if (carries_values()) codec::decode(plan_.codec, decode_part(averaged).payload, values_.subspan(first, count));
    averaged_elements_ += count;
  }
}

void ButterflyRound::arm_sender_watchdog(std::size_t s) {
  SenderState& st = senders_[s];
  st.watchdog = env_.schedule_at(st.last_heard + timeouts_.sender, [this, s] {
    SenderState& w = senders_[s];
    w.watchdog = 0;
    if (finished_ || w.dropped || w.received == my_parts_) return;
    if (env_.now() + kTimerSlack >= w.last_heard + timeouts_.sender)
      drop_sender(s);
    else
      arm_sender_watchdog(s);
  });
}

void ButterflyRound::arm_reducer_watchdog(std::size_t j) {
  ReducerState& st = reducers_[j];
  st.watchdog = env_.schedule_at(st.last_heard + timeouts_.reducer, [this, j] {
    ReducerState& w = reducers_[j];
    w.watchdog = 0;
    if (finished_ || w.dropped || w.received == plan_.parts_in_span(j)) return;
    if (env_.now() + kTimerSlack >= w.last_heard + timeouts_.reducer)
      drop_reducer(j);
    else
      arm_reducer_watchdog(j);
  });
}

void ButterflyRound::drop_sender(std::size_t s) {
  SenderState& st = senders_[s];
  if (st.dropped) return;
  st.dropped = true;
  env_.cancel(st.watchdog);
  st.watchdog = 0;
  for (std::uint32_t k = 0; k < my_parts_; ++k) try_finalize(k);
  maybe_finish();
}

void ButterflyRound::drop_reducer(std::size_t j) {
  ReducerState& st = reducers_[j];
  if (st.dropped) return;
  st.dropped = true;
  env_.cancel(st.watchdog);
  st.watchdog = 0;
  // The span's parts not yet received keep this peer's own values.
  maybe_finish();
}

void ButterflyRound::on_link_failure(PeerId peer) {
  if (!started_ || finished_) return;
  const auto member = plan_.index_of(peer);
  if (!member || *member == me_) return;
  if (my_parts_ > 0 && plan_.sends(*member) && senders_[*member].received < my_parts_) drop_sender(*member);
  if (!finished_ && plan_.sends(me_) && plan_.span_length(*member) > 0 &&
      reducers_[*member].received < plan_.parts_in_span(*member))
    drop_reducer(*member);
}

void ButterflyRound::set_pacing(bool on) {
  if (!plan_.paced()) return;
  for (std::size_t j = 0; j < plan_.size(); ++j)
    if (j != me_ && plan_.pace(me_, j) > 0) env_.set_pacing(plan_.members[j], on ? plan_.pace(me_, j) : 0);
}

bool ButterflyRound::reducer_role_done() const { return finalized_parts_ == my_parts_ && waiting_replies_ == 0; }

bool ButterflyRound::sender_role_done() const {
  if (!plan_.sends(me_)) return true;
  for (std::size_t j = 0; j < plan_.size(); ++j) {
    if (j == me_) continue;
    const ReducerState& st = reducers_[j];
    if (!st.dropped && st.received < plan_.parts_in_span(j)) return false;
  }
  return true;
}

void ButterflyRound::maybe_finish() {
  if (started_ && !finished_ && reducer_role_done() && sender_role_done()) finish(true);
}

void ButterflyRound::finish(bool completed) {
  finished_ = true;
  env_.cancel(round_timer_);
  round_timer_ = 0;
  set_pacing(false);
  for (auto& s : senders_) env_.cancel(std::exchange(s.watchdog, 0));
  for (auto& r : reducers_) env_.cancel(std::exchange(r.watchdog, 0));

  RoundOutcome out;
  out.round_id = plan_.round_id;
  out.completed = completed;
  out.started = started_at_;
  out.finished = env_.now();
  out.clipped_contributions = clipped_;
  if (plan_.sends(me_)) {
    out.fraction_averaged = plan_.length() ? static_cast<double>(averaged_elements_) / static_cast<double>(plan_.length()) : 1.0;
  } else {
    std::uint32_t averaged = 0;
    for (const auto& acc : accumulators_) averaged += (acc.finalized && acc.weight > 0 && !acc.reply_timer) ? 1 : 0;
    out.fraction_averaged = my_parts_ ? static_cast<double>(averaged) / my_parts_ : 1.0;
  }
  for (std::size_t i = 0; i < plan_.size(); ++i) {
    if (!senders_.empty() && senders_[i].dropped) out.dropped_senders.push_back(plan_.members[i]);
    if (!reducers_.empty() && reducers_[i].dropped) out.dropped_reducers.push_back(plan_.members[i]);
    if (!plan_.sends(me_) || plan_.span_length(i) == 0) continue;
    const bool whole = i == me_ ? reducer_role_done() : !reducers_.empty() && reducers_[i].received == plan_.parts_in_span(i);
    if (!whole) out.unaveraged_spans.push_back(plan_.members[i]);
  }
  // A round that failed drops the averages still waiting for the processor.
  for (auto& acc : accumulators_) env_.cancel(std::exchange(acc.reply_timer, 0));
  env_.trace("averaging", "round " + std::to_string(plan_.round_id) + (completed ? "" : " (failed)"), started_at_,
             env_.now());
  Done done = std::move(done_);
  if (done) done(out);  // owners destroy rounds later, never inside this callback (see header)
}

}  // namespace swarmlab::core::averaging

#include "core/auth/authenticated_environment.h"

#include <algorithm>

namespace swarmlab::core::auth {

AuthenticatedEnvironment::AuthenticatedEnvironment(Environment& inner, Authenticator& authenticator,
                                                   AuthenticatedEnvironmentOptions options)
    : ForwardingEnvironment(inner), auth_(authenticator), options_(std::move(options)) {
  if (!options_.key_of) throw std::invalid_argument("authenticated environment: no key directory");
  inner_.set_sink(this);
}

AuthenticatedEnvironment::~AuthenticatedEnvironment() {
  *alive_ = false;
  inner_.set_sink(nullptr);
}

void AuthenticatedEnvironment::after_work(Seconds& busy_until, Seconds cost, std::function<void()> fn) {
  if (!(cost > 0) && busy_until <= now()) {
    fn();
    return;
  }
  busy_until = std::max(busy_until, now()) + std::max(cost, 0.0);
  inner_.schedule_at(busy_until, [alive = std::weak_ptr<bool>(alive_), fn = std::move(fn)] {
    if (!alive.expired()) fn();
  });
}

void AuthenticatedEnvironment::send(PeerId to, Message message) {
  if (to == self()) throw std::out_of_range("send: a peer cannot send to itself");
  const std::optional<PublicKey> key = options_.key_of(to);
  if (!key) {
    ++unknown_peers_;
    return;
  }
  const Seconds cost = options_.sign_cost ? options_.sign_cost(message.bytes.size() + message.virtual_bytes) : 0;
  // Sealed when the CPU gets to it, so the envelope's time is the sending time.
  after_work(sign_busy_until_, cost, [this, to, key = *key, message = std::move(message)]() mutable {
    Message sealed;
    sealed.bytes = auth_.seal(key, message.bytes, message.virtual_bytes, options_.unix_origin_s + now());
    sealed.virtual_bytes = message.virtual_bytes;
    inner_.send(to, std::move(sealed));
  });
}

void AuthenticatedEnvironment::handle(PeerId from, const Message& message) {
  const Seconds cost = options_.verify_cost ? options_.verify_cost(message.bytes.size() + message.virtual_bytes) : 0;
  // Live, verifying is charged to the real CPU (no cost): open the envelope in place, without
  // keeping a copy for later.
  if (!(cost > 0) && verify_busy_until_ <= now()) {
    deliver(from, message);
    return;
  }
  after_work(verify_busy_until_, cost, [this, from, message] { deliver(from, message); });
}

void AuthenticatedEnvironment::deliver(PeerId from, const Message& message) {
  const std::optional<PublicKey> sender = options_.key_of(from);
  if (!sender) {
    ++unknown_peers_;
    return;
  }
  const Authenticator::Opened opened = auth_.open(message.bytes, message.virtual_bytes, options_.unix_origin_s + now(), *sender);
  if (opened.rejection || !sink_) return;
  Message inner;
  inner.bytes.assign(opened.payload.begin(), opened.payload.end());
  inner.virtual_bytes = message.virtual_bytes;
  sink_->handle(from, inner);
}

void AuthenticatedEnvironment::on_link_failure(PeerId peer) {
  after_work(verify_busy_until_, 0, [this, peer] {
    if (sink_) sink_->on_link_failure(peer);
  });
}

}  // namespace swarmlab::core::auth

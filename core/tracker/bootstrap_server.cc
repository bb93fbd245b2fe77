#include "core/tracker/bootstrap_server.h"

namespace swarmlab::core::tracker {

void BootstrapServer::handle(PeerId from, const Message& message) {
  BootstrapMessage request;
  try {
    request = decode_bootstrap_message(message.bytes);
  } catch (const DecodeError&) {
    ++dropped_;
    return;
  }
  if (!is_request(request.kind)) {
    ++dropped_;
    return;
  }
  env_.send(from, Message{encode(answer(from, request)), 0});
}

BootstrapMessage BootstrapServer::answer(PeerId from, const BootstrapMessage& q) {
  BootstrapMessage r;
  r.kind = reply_kind(q.kind);
  r.request_id = q.request_id;
  switch (q.kind) {
    case BootstrapKind::AssignId:
      r.id = directory_.assign_id(from);
      break;
    case BootstrapKind::RegisterDataset: {
      const CatalogueEntry* listed = directory_.find(q.title);
      r.accepted = listed ? listed->creator == from : directory_.register_dataset(q.title, from);
      break;
    }
    case BootstrapKind::ReportLeader:
      r.accepted = q.leader == from && directory_.report_leader(q.title, q.generation, q.term, from, env_.now());
      break;
    case BootstrapKind::FindTracker:
      if (const CatalogueEntry* e = directory_.find(q.title)) {
        r.accepted = true;
        r.generation = e->generation;
        r.leader = e->leader;
      }
      break;
    case BootstrapKind::ListDatasets:
      r.titles = directory_.titles();
      break;
    case BootstrapKind::FindPeers:
      // The peers closest to the asker's own id: what its routing table starts from (none until it
      // has an id).
      if (const auto id = directory_.id_of(from))
        r.peers = directory_.closest_peers(*id, static_cast<std::size_t>(q.count), from);
      break;
    default:
      break;
  }
  return r;
}

}  // namespace swarmlab::core::tracker

#include "core/tracker/state_machine.h"

#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>

#include "core/rng.h"
#include "core/tracker/commands.h"

namespace swarmlab::core::tracker {
namespace {

TrackerCommand cmd(TrackerOp op, std::uint64_t seq, std::string text = {}, PeerId peer = 0, std::uint64_t size = 0) {
  TrackerCommand c;
  c.op = op;
  c.client = 7;
  c.seq = seq;
  c.text = std::move(text);
  c.peer = peer;
  c.size = size;
  return c;
}

// A command as the leader logs it, from `origin`: by default the peer it names, or for AddFile the
// dataset's creator (who may do each).
Bytes entry(const TrackerStateMachine& m, const TrackerCommand& c, std::optional<PeerId> origin = std::nullopt) {
  return stamp_tracker_command(origin.value_or(c.op == TrackerOp::AddFile ? m.info().creator : c.peer),
                               encode_tracker_command(c));
}

TrackerResult run(TrackerStateMachine& m, const TrackerCommand& c, std::optional<PeerId> origin = std::nullopt) {
  return decode_tracker_result(m.apply(entry(m, c, origin)), c.op);
}

TrackerStatus status(TrackerStateMachine& m, const TrackerCommand& c, std::optional<PeerId> origin = std::nullopt) {
  return run(m, c, origin).status;
}

// A dataset with two files, a contributor, a downloader part-way and a seeder.
TrackerStateMachine populated() {
  TrackerStateMachine m;
  std::uint64_t seq = 0;
  EXPECT_EQ(status(m, cmd(TrackerOp::CreateDataset, ++seq, "fashion-mnist", 4)), TrackerStatus::Ok);
  EXPECT_EQ(status(m, cmd(TrackerOp::AddFile, ++seq, "train.gz", 0, 26421880)), TrackerStatus::Ok);
  EXPECT_EQ(status(m, cmd(TrackerOp::AddFile, ++seq, "test.gz", 0, 4422102)), TrackerStatus::Ok);
  EXPECT_EQ(status(m, cmd(TrackerOp::RecordContribution, ++seq, "train.gz", 4)), TrackerStatus::Ok);
  EXPECT_EQ(status(m, cmd(TrackerOp::DownloadStarted, ++seq, {}, 9)), TrackerStatus::Ok);
  EXPECT_EQ(status(m, cmd(TrackerOp::DownloadCompleted, ++seq, "test.gz", 9)), TrackerStatus::Ok);
  EXPECT_EQ(status(m, cmd(TrackerOp::DownloadCompleted, ++seq, "test.gz", 11)), TrackerStatus::Ok);
  EXPECT_EQ(status(m, cmd(TrackerOp::DownloadCompleted, ++seq, "train.gz", 11)), TrackerStatus::Ok);
  return m;
}

TEST(TrackerStateMachine, EveryCommandAndQuery) {
  TrackerStateMachine m = populated();
  const TrackerResult q = run(m, cmd(TrackerOp::Query, 100));
  ASSERT_EQ(q.status, TrackerStatus::Ok);
  ASSERT_TRUE(q.info);
  const DatasetInfo& info = *q.info;
  EXPECT_TRUE(info.created);
  EXPECT_EQ(info.title, "fashion-mnist");
  EXPECT_EQ(info.creator, 4u);
  EXPECT_EQ(info.files, (std::map<std::string, std::uint64_t>{{"test.gz", 4422102}, {"train.gz", 26421880}}));
  EXPECT_EQ(info.contributors, (std::map<PeerId, std::set<std::string>>{{4, {"train.gz"}}}));
  EXPECT_EQ(info.downloaders, (std::map<PeerId, std::set<std::string>>{{9, {"test.gz"}}}));
  EXPECT_EQ(info.seeders, (std::set<PeerId>{11}));
  EXPECT_EQ(info, m.info());

  // Removing peers: the downloader and the seeder go, the contribution stays on record.
  EXPECT_EQ(status(m, cmd(TrackerOp::RemovePeer, 101, {}, 9)), TrackerStatus::Ok);
  EXPECT_EQ(status(m, cmd(TrackerOp::RemovePeer, 102, {}, 11)), TrackerStatus::Ok);
  EXPECT_EQ(status(m, cmd(TrackerOp::RemovePeer, 103, {}, 4)), TrackerStatus::Ok);
  EXPECT_TRUE(m.info().downloaders.empty());
  EXPECT_TRUE(m.info().seeders.empty());
  EXPECT_EQ(m.info().contributors.size(), 1u);

  // Export carries the whole state.
  const TrackerResult e = run(m, cmd(TrackerOp::Export, 104));
  ASSERT_EQ(e.status, TrackerStatus::Ok);
  TrackerStateMachine copy;
  copy.restore(e.state);
  EXPECT_EQ(copy.info(), m.info());
}

TEST(TrackerStateMachine, ErrorsLeaveTheStateAsItWas) {
  TrackerStateMachine m;
  EXPECT_EQ(status(m, cmd(TrackerOp::AddFile, 0, "a", 0, 1)), TrackerStatus::NoDataset);
  EXPECT_EQ(status(m, cmd(TrackerOp::DownloadStarted, 0, {}, 1)), TrackerStatus::NoDataset);
  EXPECT_EQ(status(m, cmd(TrackerOp::Query, 0)), TrackerStatus::Ok);  // an empty dataset reads fine
  EXPECT_FALSE(m.info().created);
  EXPECT_EQ(status(m, cmd(TrackerOp::CreateDataset, 0, "d", 1)), TrackerStatus::Ok);
  const Bytes before = m.snapshot();
  EXPECT_EQ(status(m, cmd(TrackerOp::CreateDataset, 0, "other", 2)), TrackerStatus::AlreadyExists);
  EXPECT_EQ(status(m, cmd(TrackerOp::RecordContribution, 0, "missing", 3)), TrackerStatus::NoSuchFile);
  EXPECT_EQ(status(m, cmd(TrackerOp::DownloadCompleted, 0, "missing", 3)), TrackerStatus::NoSuchFile);
  EXPECT_EQ(m.info().title, "d");
  EXPECT_EQ(m.info().files.size(), 0u);
  EXPECT_EQ(status(m, cmd(TrackerOp::AddFile, 0, "a", 0, 1)), TrackerStatus::Ok);
  EXPECT_EQ(status(m, cmd(TrackerOp::AddFile, 0, "a", 0, 2)), TrackerStatus::AlreadyExists);
  EXPECT_EQ(m.info().files.at("a"), 1u);
  (void)before;
}

TEST(TrackerStateMachine, RetryGetsTheCachedResultAndOlderSeqsAreStale) {
  TrackerStateMachine m;
  EXPECT_EQ(status(m, cmd(TrackerOp::CreateDataset, 1, "d", 1)), TrackerStatus::Ok);
  EXPECT_EQ(status(m, cmd(TrackerOp::AddFile, 2, "a", 0, 5)), TrackerStatus::Ok);
  const std::uint64_t applied = m.applied();
  // The same seq again (a retry after a lost reply): the cached Ok, not AlreadyExists, and not run.
  EXPECT_EQ(status(m, cmd(TrackerOp::AddFile, 2, "a", 0, 5)), TrackerStatus::Ok);
  EXPECT_EQ(m.applied(), applied);
  // The same seq for the create too would have been answered from the cache; an older one is stale.
  EXPECT_EQ(status(m, cmd(TrackerOp::CreateDataset, 1, "d", 1)), TrackerStatus::Stale);
  EXPECT_EQ(status(m, cmd(TrackerOp::AddFile, 1, "b", 0, 5)), TrackerStatus::Stale);
  EXPECT_EQ(m.info().files.size(), 1u);
  EXPECT_EQ(m.last_seq(1, 7), 2u);  // the session of peer 1's client 7
  // A failed update's status is cached too.
  EXPECT_EQ(status(m, cmd(TrackerOp::AddFile, 3, "a", 0, 5)), TrackerStatus::AlreadyExists);
  EXPECT_EQ(status(m, cmd(TrackerOp::AddFile, 3, "a", 0, 5)), TrackerStatus::AlreadyExists);
  // A read's retry is answered afresh (still inside the retried request's interval).
  EXPECT_EQ(run(m, cmd(TrackerOp::Query, 4)).info->files.size(), 1u);
  TrackerCommand other = cmd(TrackerOp::AddFile, 1, "b", 0, 1);
  other.client = 8;
  EXPECT_EQ(status(m, other), TrackerStatus::Ok);  // sessions are per client
  EXPECT_EQ(run(m, cmd(TrackerOp::Query, 4)).info->files.size(), 2u);
  // Seq 0 opts out of sessions: executed every time.
  EXPECT_EQ(status(m, cmd(TrackerOp::AddFile, 0, "c", 0, 1)), TrackerStatus::Ok);
  EXPECT_EQ(status(m, cmd(TrackerOp::AddFile, 0, "c", 0, 1)), TrackerStatus::AlreadyExists);
}

TEST(TrackerStateMachine, SessionsSurviveSnapshots) {
  TrackerStateMachine m = populated();
  TrackerStateMachine copy;
  copy.restore(m.snapshot());
  EXPECT_EQ(copy.last_seq(11, 7), 8u);
  // The last update's retry on the restored machine is answered from the restored cache.
  EXPECT_EQ(status(copy, cmd(TrackerOp::DownloadCompleted, 8, "train.gz", 11)), TrackerStatus::Ok);
  EXPECT_EQ(copy.applied(), m.applied());
  EXPECT_EQ(status(copy, cmd(TrackerOp::AddFile, 3, "x", 0, 1)), TrackerStatus::Stale);
}

TEST(TrackerStateMachine, OnlyThePeersAllowedMayChangeTheMetadata) {
  TrackerStateMachine m;
  // Nobody creates a dataset in someone else's name.
  EXPECT_EQ(status(m, cmd(TrackerOp::CreateDataset, 1, "d", 4), 9), TrackerStatus::Unauthorized);
  EXPECT_FALSE(m.info().created);
  EXPECT_EQ(status(m, cmd(TrackerOp::CreateDataset, 1, "d", 4), 4), TrackerStatus::Ok);
  // Only the creator lists files.
  EXPECT_EQ(status(m, cmd(TrackerOp::AddFile, 1, "a", 0, 10), 9), TrackerStatus::Unauthorized);
  EXPECT_EQ(status(m, cmd(TrackerOp::AddFile, 2, "a", 0, 10), 4), TrackerStatus::Ok);
  // A contribution: the contributor itself or the creator, nobody else.
  EXPECT_EQ(status(m, cmd(TrackerOp::RecordContribution, 2, "a", 5), 9), TrackerStatus::Unauthorized);
  EXPECT_EQ(status(m, cmd(TrackerOp::RecordContribution, 2, "a", 5), 5), TrackerStatus::Ok);
  EXPECT_EQ(status(m, cmd(TrackerOp::RecordContribution, 3, "a", 6), 4), TrackerStatus::Ok);
  // Downloads: only the downloader reports its own.
  EXPECT_EQ(status(m, cmd(TrackerOp::DownloadCompleted, 3, "a", 5), 4), TrackerStatus::Unauthorized);
  EXPECT_EQ(status(m, cmd(TrackerOp::DownloadCompleted, 3, "a", 5), 5), TrackerStatus::Ok);
  EXPECT_EQ(m.info().seeders, (std::set<PeerId>{5}));
  // Taking a seeder off: itself or the creator.
  EXPECT_EQ(status(m, cmd(TrackerOp::RemovePeer, 4, {}, 5), 9), TrackerStatus::Unauthorized);
  EXPECT_EQ(m.info().seeders.size(), 1u);
  EXPECT_EQ(status(m, cmd(TrackerOp::RemovePeer, 4, {}, 5), 4), TrackerStatus::Ok);
  EXPECT_TRUE(m.info().seeders.empty());
  // Anyone reads.
  EXPECT_EQ(run(m, cmd(TrackerOp::Query, 9), 9).status, TrackerStatus::Ok);
  EXPECT_EQ(run(m, cmd(TrackerOp::Export, 10), 9).status, TrackerStatus::Ok);
}

TEST(TrackerStateMachine, AnotherPeerUsingAClientIdGetsASessionOfItsOwn) {
  TrackerStateMachine m;
  EXPECT_EQ(status(m, cmd(TrackerOp::CreateDataset, 1, "d", 4)), TrackerStatus::Ok);
  EXPECT_EQ(status(m, cmd(TrackerOp::AddFile, 2, "a", 0, 10)), TrackerStatus::Ok);
  // Peer 9 uses client id 7 with a huge seq: it neither stalls peer 4's client 7 nor replays its
  // cached results.
  EXPECT_EQ(status(m, cmd(TrackerOp::DownloadStarted, 1000, {}, 9), 9), TrackerStatus::Ok);
  EXPECT_EQ(status(m, cmd(TrackerOp::AddFile, 3, "b", 0, 10), 4), TrackerStatus::Ok);
  EXPECT_EQ(m.last_seq(4, 7), 3u);
  EXPECT_EQ(m.last_seq(9, 7), 1000u);
  EXPECT_EQ(m.info().files.size(), 2u);
}

TEST(TrackerStateMachine, ADownloaderOfEveryFileBecomesASeeder) {
  TrackerStateMachine m;
  std::uint64_t seq = 0;
  status(m, cmd(TrackerOp::CreateDataset, ++seq, "d", 1));
  for (const char* f : {"a", "b", "c"}) status(m, cmd(TrackerOp::AddFile, ++seq, f, 0, 10));
  EXPECT_EQ(status(m, cmd(TrackerOp::DownloadStarted, ++seq, {}, 5)), TrackerStatus::Ok);
  EXPECT_EQ(m.info().downloaders.at(5).size(), 0u);
  for (const char* f : {"b", "a", "a"}) {
    EXPECT_EQ(status(m, cmd(TrackerOp::DownloadCompleted, ++seq, f, 5)), TrackerStatus::Ok);
    EXPECT_TRUE(m.info().seeders.empty());
  }
  EXPECT_EQ(m.info().downloaders.at(5), (std::set<std::string>{"a", "b"}));
  EXPECT_EQ(status(m, cmd(TrackerOp::DownloadCompleted, ++seq, "c", 5)), TrackerStatus::Ok);
  EXPECT_EQ(m.info().seeders, (std::set<PeerId>{5}));
  EXPECT_FALSE(m.info().downloaders.count(5));
  // A seeder stays one: starting or completing again changes nothing, nor does a new file.
  EXPECT_EQ(status(m, cmd(TrackerOp::DownloadStarted, ++seq, {}, 5)), TrackerStatus::Ok);
  EXPECT_EQ(status(m, cmd(TrackerOp::DownloadCompleted, ++seq, "a", 5)), TrackerStatus::Ok);
  EXPECT_EQ(status(m, cmd(TrackerOp::AddFile, ++seq, "d", 0, 1)), TrackerStatus::Ok);
  EXPECT_EQ(m.info().seeders, (std::set<PeerId>{5}));
  EXPECT_TRUE(m.info().downloaders.empty());
  // A single-file dataset: completing its file without a start makes a seeder at once.
  TrackerStateMachine one;
  status(one, cmd(TrackerOp::CreateDataset, 1, "one", 1));
  status(one, cmd(TrackerOp::AddFile, 2, "f", 0, 1));
  EXPECT_EQ(status(one, cmd(TrackerOp::DownloadCompleted, 3, "f", 8)), TrackerStatus::Ok);
  EXPECT_EQ(one.info().seeders, (std::set<PeerId>{8}));
  EXPECT_TRUE(one.info().downloaders.empty());
}

TEST(TrackerStateMachine, LimitsAnswerFullAndChangeNothing) {
  TrackerLimits limits;
  limits.max_files = 2;
  limits.max_peers = 2;
  limits.max_records = 3;
  limits.max_sessions = 2;
  TrackerStateMachine m(limits);
  status(m, cmd(TrackerOp::CreateDataset, 0, "d", 1));
  EXPECT_EQ(status(m, cmd(TrackerOp::AddFile, 0, "a", 0, 1)), TrackerStatus::Ok);
  EXPECT_EQ(status(m, cmd(TrackerOp::AddFile, 0, "b", 0, 1)), TrackerStatus::Ok);
  EXPECT_EQ(status(m, cmd(TrackerOp::AddFile, 0, "c", 0, 1)), TrackerStatus::Full);
  EXPECT_EQ(status(m, cmd(TrackerOp::RecordContribution, 0, "a", 1)), TrackerStatus::Ok);
  EXPECT_EQ(status(m, cmd(TrackerOp::RecordContribution, 0, "a", 2)), TrackerStatus::Ok);
  EXPECT_EQ(status(m, cmd(TrackerOp::RecordContribution, 0, "a", 3)), TrackerStatus::Full);  // peers
  EXPECT_EQ(status(m, cmd(TrackerOp::RecordContribution, 0, "b", 1)), TrackerStatus::Ok);
  EXPECT_EQ(status(m, cmd(TrackerOp::RecordContribution, 0, "b", 2)), TrackerStatus::Full);  // records
  const DatasetInfo before = m.info();
  EXPECT_EQ(status(m, cmd(TrackerOp::DownloadCompleted, 0, "a", 5)), TrackerStatus::Full);   // records
  EXPECT_EQ(m.info(), before);
  EXPECT_EQ(status(m, cmd(TrackerOp::DownloadStarted, 0, {}, 5)), TrackerStatus::Ok);
  EXPECT_EQ(status(m, cmd(TrackerOp::DownloadStarted, 0, {}, 6)), TrackerStatus::Ok);
  EXPECT_EQ(status(m, cmd(TrackerOp::DownloadStarted, 0, {}, 7)), TrackerStatus::Full);      // peers

  // Sessions: a third client evicts the one idle longest.
  TrackerStateMachine s(limits);
  for (std::uint64_t client : {1, 2, 3}) {
    TrackerCommand c = cmd(TrackerOp::Query, 1);
    c.client = client;
    run(s, c);
  }
  EXPECT_EQ(s.sessions(), 2u);
  EXPECT_EQ(s.last_seq(0, 1), 0u);
  EXPECT_EQ(s.last_seq(0, 3), 1u);
  TrackerStateMachine restored(limits);
  restored.restore(s.snapshot());
  EXPECT_EQ(restored.snapshot(), s.snapshot());
}

TEST(TrackerStateMachine, MalformedCommandsGetMalformedAndChangeNothing) {
  TrackerStateMachine m = populated();
  const Bytes before = m.snapshot();
  const auto malformed = [&](const Bytes& bytes) {
    return decode_tracker_result(m.apply(stamp_tracker_command(4, bytes)), TrackerOp::AddFile).status ==
           TrackerStatus::Malformed;
  };
  // Entries without an origin, or with one beyond 32 bits.
  EXPECT_EQ(decode_tracker_result(m.apply({}), TrackerOp::AddFile).status, TrackerStatus::Malformed);
  EXPECT_EQ(decode_tracker_result(m.apply(Bytes{0x80}), TrackerOp::AddFile).status, TrackerStatus::Malformed);
  EXPECT_EQ(decode_tracker_result(m.apply(stamp_tracker_command(4, encode_tracker_command(cmd(TrackerOp::Query, 49)))),
                                  TrackerOp::Query)
                .status,
            TrackerStatus::Ok);
  Bytes wide_origin;
  Writer wo(wide_origin);
  wo.varint(1ull << 32);
  const Bytes query = encode_tracker_command(cmd(TrackerOp::Query, 48));
  wide_origin.insert(wide_origin.end(), query.begin(), query.end());
  EXPECT_EQ(decode_tracker_result(m.apply(wide_origin), TrackerOp::AddFile).status, TrackerStatus::Malformed);
  EXPECT_TRUE(malformed({}));
  EXPECT_TRUE(malformed({0}));
  EXPECT_TRUE(malformed({9, 1, 1}));  // unknown op
  Bytes trailing = encode_tracker_command(cmd(TrackerOp::Query, 50));
  trailing.push_back(0);
  EXPECT_TRUE(malformed(trailing));
  EXPECT_TRUE(malformed(encode_tracker_command(cmd(TrackerOp::AddFile, 51, "", 0, 1))));  // empty name
  EXPECT_TRUE(malformed(encode_tracker_command(cmd(TrackerOp::AddFile, 52, std::string(129, 'x'), 0, 1))));
  EXPECT_TRUE(malformed(encode_tracker_command(cmd(TrackerOp::AddFile, 53, "big", 0, (1ull << 50) + 1))));
  EXPECT_TRUE(malformed(encode_tracker_command(cmd(TrackerOp::CreateDataset, 54, std::string(257, 't'), 1))));
  Bytes wide_peer;
  Writer w(wide_peer);
  w.u8(static_cast<std::uint8_t>(TrackerOp::RemovePeer));
  w.varint(7);
  w.varint(55);
  w.varint(1ull << 32);  // peers are 32-bit
  EXPECT_TRUE(malformed(wide_peer));
  // Every truncation of every well-formed command.
  for (const TrackerCommand& c : {cmd(TrackerOp::CreateDataset, 60, "t", 1), cmd(TrackerOp::AddFile, 61, "f", 0, 300),
                                  cmd(TrackerOp::DownloadCompleted, 62, "f", 70000)}) {
    const Bytes full = encode_tracker_command(c);
    for (std::size_t n = 0; n < full.size(); ++n) EXPECT_TRUE(malformed(Bytes(full.begin(), full.begin() + n)));
  }
  // Random bytes: always a result, never an exception.
  Rng rng(3, 1);
  for (int i = 0; i < 5000; ++i) {
    Bytes b(rng.below(24));
    for (auto& x : b) x = static_cast<std::uint8_t>(rng.below(256));
    EXPECT_NO_THROW(m.apply(b));
  }
  (void)before;
  EXPECT_TRUE(m.info().created);
}

TEST(TrackerStateMachine, CommandsAndResultsRoundTrip) {
  for (std::uint8_t op = 1; op <= 8; ++op) {
    TrackerCommand c = cmd(static_cast<TrackerOp>(op), 1000 + op, "name", 77, 12345);
    const TrackerCommand d = decode_tracker_command(encode_tracker_command(c));
    EXPECT_EQ(encode_tracker_command(d), encode_tracker_command(c));
  }
  TrackerStateMachine m = populated();
  const TrackerResult q{TrackerStatus::Ok, m.info(), {}};
  EXPECT_EQ(decode_tracker_result(encode_tracker_result(q), TrackerOp::Query), q);
  const TrackerResult e{TrackerStatus::Ok, std::nullopt, m.snapshot()};
  EXPECT_EQ(decode_tracker_result(encode_tracker_result(e), TrackerOp::Export), e);
  const TrackerResult f{TrackerStatus::Full, std::nullopt, {}};
  EXPECT_EQ(decode_tracker_result(encode_tracker_result(f), TrackerOp::Query), f);
  EXPECT_THROW(decode_tracker_result(Bytes{0}, TrackerOp::AddFile), DecodeError);
  EXPECT_THROW(decode_tracker_result(Bytes{9}, TrackerOp::AddFile), DecodeError);
  const TrackerResult refused{TrackerStatus::Unauthorized, std::nullopt, {}};
  EXPECT_EQ(decode_tracker_result(encode_tracker_result(refused), TrackerOp::AddFile), refused);
  EXPECT_THROW(decode_tracker_result(Bytes{1, 0}, TrackerOp::AddFile), DecodeError);
  EXPECT_THROW(decode_tracker_result(Bytes{1, 0}, TrackerOp::Export), DecodeError);  // empty export
}

TEST(TrackerStateMachine, SnapshotRoundTrip) {
  TrackerStateMachine m = populated();
  const Bytes snap = m.snapshot();
  TrackerStateMachine copy;
  copy.restore(snap);
  EXPECT_EQ(copy.info(), m.info());
  EXPECT_EQ(copy.applied(), m.applied());
  EXPECT_EQ(copy.snapshot(), snap);
  // Both go on identically.
  const Bytes next = entry(m, cmd(TrackerOp::DownloadCompleted, 9, "train.gz", 9));
  EXPECT_EQ(copy.apply(next), m.apply(next));
  EXPECT_EQ(copy.snapshot(), m.snapshot());
  // The empty machine too.
  TrackerStateMachine empty, empty_copy;
  empty_copy.restore(empty.snapshot());
  EXPECT_EQ(empty_copy.snapshot(), empty.snapshot());
}

TEST(TrackerStateMachine, MalformedSnapshotsAreRejectedWithTheStateUnchanged) {
  const Bytes good = populated().snapshot();
  TrackerStateMachine target;
  status(target, cmd(TrackerOp::CreateDataset, 1, "kept", 2));
  const Bytes kept = target.snapshot();
  const auto rejected = [&](const Bytes& bytes) {
    try {
      target.restore(bytes);
    } catch (const DecodeError&) {
      return target.snapshot() == kept;
    }
    target.restore(kept);  // it decoded: put the reference state back for the next case
    return false;
  };
  EXPECT_TRUE(rejected({}));
  Bytes version = good;
  version[0] = 1;  // before sessions named their origin
  EXPECT_TRUE(rejected(version));
  Bytes trailing = good;
  trailing.push_back(0);
  EXPECT_TRUE(rejected(trailing));
  for (std::size_t n = 0; n < good.size(); ++n) EXPECT_TRUE(rejected(Bytes(good.begin(), good.begin() + n))) << n;

  // Hand-built states that break one rule each.
  const auto state = [](const DatasetInfo& info) {
    Bytes out;
    Writer w(out);
    w.u8(2);
    w.varint(0);
    write_dataset_info(w, info);
    w.varint(0);
    return out;
  };
  DatasetInfo base;
  base.created = true;
  base.title = "d";
  base.files = {{"a", 1}, {"b", 2}};
  EXPECT_FALSE(rejected(state(base)));
  DatasetInfo unknown_file = base;
  unknown_file.contributors[1] = {"zzz"};
  EXPECT_TRUE(rejected(state(unknown_file)));
  DatasetInfo both = base;
  both.downloaders[3] = {"a"};
  both.seeders = {3};
  EXPECT_TRUE(rejected(state(both)));
  DatasetInfo empty_contribution = base;
  empty_contribution.contributors[1] = {};
  EXPECT_TRUE(rejected(state(empty_contribution)));
  DatasetInfo not_created;
  not_created.files = {{"a", 1}};
  EXPECT_TRUE(rejected(state(not_created)));
  DatasetInfo untitled = base;
  untitled.title.clear();
  EXPECT_TRUE(rejected(state(untitled)));
  // Unsorted file names: swap the two names' bytes in the encoding.
  Bytes unsorted = state(base);
  for (std::size_t i = 0; i + 1 < unsorted.size(); ++i)
    if (unsorted[i] == 1 && unsorted[i + 1] == 'a') {
      unsorted[i + 1] = 'c';
      break;
    }
  EXPECT_TRUE(rejected(unsorted));

  // Every single-byte mutation either decodes (then re-encodes canonically) or leaves the state.
  Rng rng(5, 2);
  for (int i = 0; i < 3000; ++i) {
    Bytes b = good;
    b[rng.below(b.size())] = static_cast<std::uint8_t>(rng.below(256));
    TrackerStateMachine probe;
    status(probe, cmd(TrackerOp::CreateDataset, 1, "kept", 2));
    const Bytes probe_before = probe.snapshot();
    try {
      probe.restore(b);
      EXPECT_EQ(probe.snapshot(), b);
    } catch (const DecodeError&) {
      EXPECT_EQ(probe.snapshot(), probe_before);
    }
  }
}

}  // namespace
}  // namespace swarmlab::core::tracker

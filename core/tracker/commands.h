#pragma once
// A dataset tracker's commands, results and metadata as bytes (docs/hydra.md §2). A command is what
// a client puts in a Raft ClientRequest; the group's leader stamps it with the sender (an entry),
// the group applies the entry to its TrackerStateMachine, and the result travels back in the
// ClientReply.
//
// Entry   = varint origin (the peer that sent the ClientRequest), Command
// Command = u8 op, varint client, varint seq, then by op:
//   CreateDataset      str title, varint creator
//   AddFile            str name, varint size
//   RecordContribution varint peer, str file
//   DownloadStarted    varint peer
//   DownloadCompleted  varint peer, str file
//   RemovePeer         varint peer
//   Query, Export      (nothing)
// Result  = u8 status (TrackerStatus), then with status Ok: for Query a DatasetInfo, for Export the
//           state machine's snapshot as bytes; nothing otherwise.
// DatasetInfo = u8 created, str title, varint creator,
//   varint n, n × (str name, varint size)                    names strictly ascending
//   varint n, n × (varint peer, varint m, m × str file)      contributors; peers, files ascending
//   varint n, n × (varint peer, varint m, m × str file)      downloaders and the files they have
//   varint n, n × varint peer                                seeders, ascending
//
// The decoders accept exactly this within TrackerLimits: unknown ops or statuses, booleans other
// than 0/1, peers above 2^32 - 1, oversized fields, counts over the limits, unsorted or repeated
// names and peers, files that the dataset does not list, truncation and trailing bytes all throw
// DecodeError.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>

#include "core/raft/types.h"
#include "core/types.h"
#include "core/wire.h"

namespace swarmlab::core::tracker {

using raft::Bytes;

// Bounds on every field, so that a dataset's whole state (and so a Query or Export result, and a
// snapshot) stays well under one Raft entry (WireLimits::max_entry_bytes, 1 MiB): 1024 files of
// 128-byte names, 2048 peer-file records of 128-byte names and 4096 sessions take about 450 KiB.
struct TrackerLimits {
  std::size_t max_title_bytes = 256;
  std::size_t max_file_name_bytes = 128;
  std::uint64_t max_file_size = 1ull << 50;  // 1 PiB
  std::size_t max_files = 1024;
  std::size_t max_peers = 1024;    // distinct peers in each of contributors, downloaders, seeders
  std::size_t max_records = 2048;  // (peer, file) pairs: contributions plus files downloaded so far
  std::size_t max_sessions = 4096; // clients remembered for exactly-once execution
};

enum class TrackerOp : std::uint8_t {
  CreateDataset = 1,
  AddFile = 2,
  RecordContribution = 3,
  DownloadStarted = 4,
  DownloadCompleted = 5,
  RemovePeer = 6,
  Query = 7,   // read the metadata through the log (linearizable)
  Export = 8,  // read the whole state, sessions included (the creator's snapshot)
};

enum class TrackerStatus : std::uint8_t {
  Ok = 1,
  Stale = 2,          // a seq older than the client's last one: not executed
  Malformed = 3,      // the command did not decode
  NoDataset = 4,      // the dataset was not created yet
  AlreadyExists = 5,  // create a second time, or add a file name already listed
  NoSuchFile = 6,     // a contribution or download of a file the dataset does not list
  Full = 7,           // a TrackerLimits bound would be exceeded
  Unauthorized = 8,   // the sender may not do this (state_machine.h says who may do what)
};
const char* to_string(TrackerStatus status);

struct TrackerCommand {
  TrackerOp op = TrackerOp::Query;
  std::uint64_t client = 0;
  std::uint64_t seq = 0;  // 1, 2, 3, … per client; 0: no session (executed every time)
  std::string text;       // CreateDataset: title; AddFile, RecordContribution, DownloadCompleted: file
  PeerId peer = 0;        // CreateDataset: creator; RecordContribution, Download*, RemovePeer: peer
  std::uint64_t size = 0; // AddFile
  friend bool operator==(const TrackerCommand&, const TrackerCommand&) = default;
};

// A dataset's metadata.
struct DatasetInfo {
  bool created = false;
  std::string title;
  PeerId creator = 0;
  std::map<std::string, std::uint64_t> files;               // name -> size in bytes
  std::map<PeerId, std::set<std::string>> contributors;     // peer -> files it contributed
  std::map<PeerId, std::set<std::string>> downloaders;      // peer -> files it has completed so far
  std::set<PeerId> seeders;                                 // completed every file
  friend bool operator==(const DatasetInfo&, const DatasetInfo&) = default;
};

struct TrackerResult {
  TrackerStatus status = TrackerStatus::Ok;
  std::optional<DatasetInfo> info;  // Query
  Bytes state;                      // Export
  friend bool operator==(const TrackerResult&, const TrackerResult&) = default;
};

bool is_update(TrackerOp op);

Bytes encode_tracker_command(const TrackerCommand& c);
// Throws DecodeError.
TrackerCommand decode_tracker_command(std::span<const std::uint8_t> bytes, const TrackerLimits& limits = {});

// A command as the log holds it: stamped with the peer that sent it.
struct TrackerEntry {
  PeerId origin = 0;
  TrackerCommand command;
};
Bytes stamp_tracker_command(PeerId origin, std::span<const std::uint8_t> command);
// Throws DecodeError.
TrackerEntry decode_tracker_entry(std::span<const std::uint8_t> bytes, const TrackerLimits& limits = {});
Bytes encode_tracker_result(const TrackerResult& r);
// Throws DecodeError. `op` is the command the result answers (it says what follows an Ok).
TrackerResult decode_tracker_result(std::span<const std::uint8_t> bytes, TrackerOp op, const TrackerLimits& limits = {});

void write_dataset_info(Writer& w, const DatasetInfo& info);
// Throws DecodeError; checks every TrackerLimits bound.
DatasetInfo read_dataset_info(Reader& r, const TrackerLimits& limits);
// Peer-file records: contributions plus files downloaded so far (bounded by max_records).
std::size_t record_count(const DatasetInfo& info);

}  // namespace swarmlab::core::tracker

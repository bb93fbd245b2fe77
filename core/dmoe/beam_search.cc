#include "core/dmoe/beam_search.h"

#include <algorithm>
#include <memory>
#include <stdexcept>


namespace swarmlab::core::dmoe {

namespace {

struct Candidate {
  ExpertUid prefix;
  double score = 0;
  PeerId runtime = 0;
};

bool better(const Candidate& a, const Candidate& b) {
  if (a.score != b.score) return a.score > b.score;
  if (a.prefix != b.prefix) return a.prefix < b.prefix;
  return a.runtime < b.runtime;
}

struct Search {
  Environment& env;
  dht::DhtNode& dht;
  ExpertGrid grid;
  std::vector<std::vector<double>> scores;
  std::size_t k = 0;
  std::function<void(BeamSearchResult)> done;
  Seconds started = 0;
  BeamSearchResult result;
  std::vector<Candidate> beam;
  std::vector<Candidate> next;
  std::size_t outstanding = 0;
  std::size_t level = 0;
};

void run_level(const std::shared_ptr<Search>& s);

void finish_level(const std::shared_ptr<Search>& s) {
  std::sort(s->next.begin(), s->next.end(), better);
  // Equal prefixes are adjacent: keep the first (the smaller runtime at the last level).
  s->next.erase(std::unique(s->next.begin(), s->next.end(), [](const Candidate& a, const Candidate& b) { return a.prefix == b.prefix; }),
                s->next.end());
  if (s->next.size() > s->k) s->next.resize(s->k);
  s->beam = std::move(s->next);
  s->next.clear();
  ++s->level;
  if (s->beam.empty() || s->level == s->grid.dims) {
    for (const Candidate& c : s->beam) s->result.experts.push_back({c.prefix, c.runtime, c.score});
    s->result.latency_s = s->env.now() - s->started;
    s->done(std::move(s->result));
    return;
  }
  run_level(s);
}

void run_level(const std::shared_ptr<Search>& s) {
  s->outstanding = s->beam.size();
  const std::size_t level = s->level;
  const bool last = level + 1 == s->grid.dims;
  for (const Candidate& parent : s->beam) {
    ++s->result.lookups;
    s->dht.get(prefix_key(s->grid, parent.prefix), [s, parent, level, last](std::optional<dht::Record> record, const dht::LookupStats&) {
      if (!record || !record->is_dictionary()) {
        ++s->result.failed_lookups;
      } else {
        const auto add = [&](std::uint32_t coordinate, PeerId runtime) {
          Candidate c{parent.prefix, parent.score + s->scores[level][coordinate], runtime};
          c.prefix.push_back(coordinate);
          s->next.push_back(std::move(c));
        };
        for (const auto& [subkey, value] : record->dictionary()) {
          if (!last) {
            const auto coordinate = parse_coordinate_subkey(subkey);
            if (coordinate && *coordinate < s->grid.side) add(*coordinate, 0);
            continue;
          }
          const auto runtime = decode_runtime(subkey);
          const auto coordinates = decode_coordinates(value.value, s->grid.side);
          if (!runtime || !coordinates) continue;
          for (const std::uint32_t c : *coordinates) add(c, *runtime);
        }
      }
      if (--s->outstanding == 0) finish_level(s);
    });
  }
}

}  // namespace

void beam_search(Environment& env, dht::DhtNode& dht, const ExpertGrid& grid, std::vector<std::vector<double>> scores,
                 std::size_t k, std::function<void(BeamSearchResult)> done) {
  grid.check();
  if (k == 0) throw std::invalid_argument("beam search: k must be positive");
  if (scores.size() != grid.dims) throw std::invalid_argument("beam search: one score vector per grid dimension");
  for (const auto& row : scores)
    if (row.size() != grid.side) throw std::invalid_argument("beam search: each score vector has the grid's side");
  auto s = std::make_shared<Search>(Search{env, dht, grid, std::move(scores), k, std::move(done), env.now(), {}, {}, {}, 0, 0});
  s->beam.push_back({});
  run_level(s);
}

}  // namespace swarmlab::core::dmoe

// The snapshot stores of checkpointed sweeps on the Eigen backend, instantiated once here (their
// declarations: rewind/adjoint/detail/sweep_store.hpp), so that the programs and tests that run
// checkpointed drivers on the Eigen backend do not each compile them again.
#include "rewind/adjoint/detail/sweep_store.hpp"

#include <memory>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/carry.hpp"

namespace rwd {
template class MemorySnapshotStore<EigenBackend, Carry>;
template class HostSnapshotStore<EigenBackend, Carry>;
template class DiskSnapshotStore<EigenBackend, Carry>;
template class MultiLevelSnapshotStore<EigenBackend, Carry>;
template std::unique_ptr<SnapshotStore<EigenBackend, Carry>> make_level_store<EigenBackend, Carry>(
    LevelKind, int, Index, const DiskStoreOptions&, const ProcessSlice&);
template std::unique_ptr<SnapshotStore<EigenBackend, Carry>>
make_snapshot_store<EigenBackend, Carry>(const CheckpointPlan&, Index, const DiskStoreOptions&,
                                         const ProcessSlice&, const SnapshotLevelLimits&);
namespace detail {
template class MemoryStoreCache<EigenBackend>;
template struct SweepStore<EigenBackend>;
template SweepStore<EigenBackend> open_planned_store<EigenBackend>(const CheckpointPlan&, Index,
                                                                   const DiskStoreOptions&,
                                                                   const ProcessSlice&,
                                                                   const SnapshotLevelLimits&,
                                                                   MemoryStoreCache<EigenBackend>&);
template SweepStore<EigenBackend> open_online_store<EigenBackend>(const OnlineSchedule&, bool,
                                                                  Index, const DiskStoreOptions&,
                                                                  const ProcessSlice&,
                                                                  MemoryStoreCache<EigenBackend>&);
}  // namespace detail
}  // namespace rwd

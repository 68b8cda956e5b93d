//! GPU matrix evaluation: the WGSL kernels of `shaders/` run with wgpu (Vulkan; Mesa's lavapipe
//! where there is no hardware GPU).
//!
//! Input: [`Prepared`]. Output: a [`Matrix`] equal bit for bit to
//! [`crate::eval::cpu::evaluate`]'s (checked by `tests/all/gpu_parity.rs`). No upstream counterpart.
//!
//! [`GpuContext`] is long-lived: it owns the device, the queue, one compute pipeline per kernel
//! and a cache of buffers reused (grown when needed) from one evaluation to the next. An
//! evaluation uploads the encoded buffers with `bytemuck`, then walks the matrix in *class
//! chunks* (rows) × *node tiles* (columns):
//!
//! * a node tile is at most `tile_stride` nodes, a multiple of the workgroup size, so that one
//!   dispatch stays under the workgroup-count limit and one tile's cell planes (`chunk × tile`
//!   cells of 4 bytes) fit one storage binding; the cell planes hold every tile of a chunk, and
//!   each tile binds its own range of them;
//! * a class chunk bounds the size of the planes; the row reductions (feasible count, row maxima
//!   for normalization, best total) are per class, so chunks are independent and are processed
//!   one after the other with the same buffers.
//!
//! Per chunk, one command buffer runs every filter/raw-score kernel over every tile (one compute
//! pass for all of them: WebGPU makes each dispatch a usage scope, so each kernel sees the
//! previous one's writes), then `feasibility` (first failure, feasible bit, feasible counts and
//! row maxima with atomics), then `normalize_score` (normalized scores, totals, best totals), and
//! copies the planes to staging buffers that are mapped and read back. The reductions run on the
//! device. [`GpuContext::evaluate`] reads every plane back because the [`Matrix`] holds them;
//! [`GpuContext::evaluate_lean`] (what `plan` uses) leaves the raw planes and the reason words on
//! the device.
//!
//! Binary64 ([`Binary64`]): native where the adapter has `SHADER_F64` and `SHADER_INT64` and the
//! start-up self-test (`selftest.rs`) gives the CPU's bits, software otherwise.
//!
//! Adapter choice: hardware first (discrete, integrated, virtual, other), then a CPU adapter
//! such as lavapipe ([`GpuContext::new`], `--backend gpu`). [`GpuContext::new_hardware`]
//! (`--backend auto`) takes hardware only: a software Vulkan driver is slower than kplace's
//! own CPU evaluator, so `auto` evaluates on the CPU rather than on it. No adapter is
//! [`GpuError::NoAdapter`], software ones only [`GpuError::SoftwareOnly`];
//! [`crate::eval::Evaluator::select`] turns either into the CPU fallback for `--backend auto`.

pub mod kernels;
mod scatter;
mod selftest;
pub mod types;

pub use self::kernels::Binary64;
pub use self::selftest::{binary64_inputs, binary64_mismatches};

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use bytemuck::{Pod, bytes_of, cast_slice};
use thiserror::Error;

use self::kernels::{Buf, KERNELS, kernel_source_with, max_storage_buffers};
use self::scatter::{Scatter, scatter, words_of};
use self::types::{EvalParams, MAX_CHECKS, WORKGROUP_SIZE, eval_buffers};
use super::columns::{NodeUsage, ResourceColumns};
use super::{LeanMatrix, Matrix, NUM_SCORE_PLANES, Prepared, RawResults, ScorePlugin};
use crate::encode::gpu_types::nonempty;
use crate::framework::profile::PluginName;

/// Why the GPU path failed.
#[derive(Debug, Error)]
pub enum GpuError {
    /// No Vulkan adapter (no driver, or no device).
    #[error("no GPU adapter found")]
    NoAdapter,
    /// Only software adapters (lavapipe, llvmpipe), and hardware was asked for.
    #[error("no hardware GPU adapter (software adapter {0:?} is used only with --backend gpu)")]
    SoftwareOnly(String),
    /// The adapter's limits are below what the kernels need.
    #[error("GPU adapter {adapter:?} allows {available} {what}, the kernels need {needed}")]
    Limits {
        /// The adapter.
        adapter: String,
        /// The limit.
        what: &'static str,
        /// What the kernels need.
        needed: u64,
        /// What the adapter allows.
        available: u64,
    },
    /// The adapter refused a device.
    #[error("GPU adapter {adapter:?} refused a device")]
    RequestDevice {
        /// The adapter.
        adapter: String,
        /// Why.
        #[source]
        source: wgpu::RequestDeviceError,
    },
    /// wgpu reported a validation or out-of-memory error.
    #[error("GPU error: {0}")]
    Device(String),
    /// The matrix or an input does not fit the device's buffer limits.
    #[error("too large for the GPU: {0}")]
    TooLarge(String),
    /// Reading results back failed.
    #[error("reading GPU results back failed: {0}")]
    Readback(String),
    /// Native binary64 was asked for and the adapter cannot give it.
    #[error("GPU adapter {adapter:?} cannot compute binary64 natively: {why}")]
    Binary64 {
        /// The adapter.
        adapter: String,
        /// Why: the missing features, or the first self-test result that differed.
        why: String,
    },
}

/// Random input pairs of the start-up self-test of native binary64 (after every pair of the
/// special values).
const STARTUP_SELFTEST_PAIRS: usize = 2000;

/// Tiling knobs (tests force small tiles and chunks; `None` = as large as the limits allow).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GpuOptions {
    /// The most nodes per tile (rounded down to a multiple of the workgroup size, at least one
    /// workgroup).
    pub max_tile_nodes: Option<u32>,
    /// The most classes per chunk.
    pub max_chunk_classes: Option<u32>,
}

/// How an evaluation is cut into chunks and tiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tiling {
    /// Nodes per tile (a multiple of the workgroup size).
    pub tile_stride: u32,
    /// Number of tiles.
    pub tiles: u32,
    /// Classes per chunk.
    pub chunk_classes: u32,
    /// Number of chunks.
    pub chunks: u32,
}

/// Which cached buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Slot {
    /// A kernel buffer.
    Bound(Buf),
    /// The staging copy of a plane.
    Staging(Buf),
}

/// The planes read back, in a fixed order.
const READBACK: [Buf; 9] = [
    Buf::CellFilter,
    Buf::FitInsufficient,
    Buf::Total,
    Buf::Raw,
    Buf::Norm,
    Buf::RowMax,
    Buf::RowMin,
    Buf::FeasibleCount,
    Buf::BestTotal,
];

/// Where the last [`GpuContext::evaluate`] spent its wall time, summed over its class chunks
/// (all zero after an evaluation with no cells).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StageTimings {
    /// Host to device: writing the input buffers (and creating or growing cached buffers), and
    /// each chunk's parameters and initial row reductions (`write_buffer` stages them on the
    /// host; the device copies them at submission, inside `dispatch`).
    pub upload: Duration,
    /// Creating the bind groups (per kernel, per tile).
    pub bind: Duration,
    /// Recording the command buffer, submitting it and waiting for the device: every kernel
    /// and the device-side copies of the planes to the staging buffers, until the poll returns.
    pub dispatch: Duration,
    /// Device to host: the mapped staging buffers copied out and scattered into the matrix.
    pub readback: Duration,
}

impl StageTimings {
    /// The sum of the stages.
    pub fn total(&self) -> Duration {
        self.upload + self.bind + self.dispatch + self.readback
    }
}

/// Byte distance between the per-tile `params` slots (the uniform offset alignment).
const PARAMS_SLOT: u64 = 256;

/// A device with the matrix kernels compiled, reusable across evaluations.
#[derive(Debug)]
pub struct GpuContext {
    device: wgpu::Device,
    queue: wgpu::Queue,
    info: wgpu::AdapterInfo,
    binary64: Binary64,
    pipelines: Vec<wgpu::ComputePipeline>,
    options: GpuOptions,
    buffers: BTreeMap<Slot, (wgpu::Buffer, u64)>,
    timings: StageTimings,
}

fn adapter_rank(t: wgpu::DeviceType) -> u8 {
    match t {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Other => 3,
        wgpu::DeviceType::Cpu => 4,
    }
}

fn device_error(e: wgpu::Error) -> GpuError {
    GpuError::Device(e.to_string())
}

impl GpuContext {
    /// Opens the best adapter, a software one (lavapipe) when there is no hardware, requests a
    /// device with the limits the kernels need and compiles every kernel, with native binary64
    /// when the adapter has it and passes the self-test ([`Binary64`]; the environment
    /// variable `KPLACE_GPU_F64=software` keeps it in software).
    pub fn new(options: &GpuOptions) -> Result<GpuContext, GpuError> {
        Self::open(options, true, None)
    }

    /// As [`GpuContext::new`], with hardware adapters only: [`GpuError::SoftwareOnly`] when
    /// the only adapters are CPU implementations.
    pub fn new_hardware(options: &GpuOptions) -> Result<GpuContext, GpuError> {
        Self::open(options, false, None)
    }

    /// As [`GpuContext::new`], with the binary64 mode given: [`GpuError::Binary64`] when it is
    /// [`Binary64::Native`] and the adapter lacks the features or fails the self-test.
    pub fn with_binary64(options: &GpuOptions, binary64: Binary64) -> Result<GpuContext, GpuError> {
        Self::open(options, true, Some(binary64))
    }

    /// The binary64 the kernels compute with.
    pub fn binary64(&self) -> Binary64 {
        self.binary64
    }

    fn open(
        options: &GpuOptions,
        allow_software: bool,
        binary64: Option<Binary64>,
    ) -> Result<GpuContext, GpuError> {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
        let adapter = adapters
            .into_iter()
            .min_by_key(|a| adapter_rank(a.get_info().device_type))
            .ok_or(GpuError::NoAdapter)?;
        if !allow_software && adapter.get_info().device_type == wgpu::DeviceType::Cpu {
            return Err(GpuError::SoftwareOnly(adapter.get_info().name));
        }
        let info = adapter.get_info();
        let name = info.name.clone();
        let available = adapter.limits();
        let needed = max_storage_buffers();
        if available.max_storage_buffers_per_shader_stage < needed {
            return Err(GpuError::Limits {
                adapter: name,
                what: "storage buffers per shader stage",
                needed: needed.into(),
                available: available.max_storage_buffers_per_shader_stage.into(),
            });
        }
        let required_limits = wgpu::Limits {
            max_storage_buffers_per_shader_stage: needed,
            max_storage_buffer_binding_size: available.max_storage_buffer_binding_size,
            max_buffer_size: available.max_buffer_size,
            ..wgpu::Limits::default()
        };
        let native = Binary64::Native.features();
        let has_native = adapter.features().contains(native);
        let asked = match binary64 {
            Some(b) => Some(b),
            None => match std::env::var("KPLACE_GPU_F64").as_deref() {
                Ok("software") => Some(Binary64::Software),
                _ => None,
            },
        };
        if asked == Some(Binary64::Native) && !has_native {
            return Err(GpuError::Binary64 {
                adapter: name,
                why: "it lacks SHADER_F64 or SHADER_INT64".into(),
            });
        }
        let try_native = asked != Some(Binary64::Software) && has_native;
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("kplace"),
            required_features: if try_native { native } else { wgpu::Features::empty() },
            required_limits,
            ..Default::default()
        }))
        .map_err(|source| GpuError::RequestDevice { adapter: name.clone(), source })?;
        // Errors outside an error scope would otherwise panic; every operation below runs in
        // one, so this only logs what escapes.
        device.on_uncaptured_error(Arc::new(|e: wgpu::Error| {
            tracing::error!("uncaptured wgpu error: {e}");
        }));

        // Native binary64 only where the device computes exactly as the CPU on the self-test's
        // inputs (every operation the kernels use, the guarded native ones and the software
        // ones built on them).
        let mut binary64 = Binary64::Software;
        if try_native {
            let inputs = binary64_inputs(STARTUP_SELFTEST_PAIRS);
            let why = match selftest::selftest(&device, &queue, Binary64::Native, &inputs) {
                Ok(results) => binary64_mismatches(&inputs, &results).into_iter().next(),
                Err(e) => Some(e.to_string()),
            };
            match why {
                None => binary64 = Binary64::Native,
                Some(why) if asked == Some(Binary64::Native) => {
                    return Err(GpuError::Binary64 { adapter: name, why });
                }
                Some(why) => {
                    tracing::warn!(
                        "{name}: native binary64 differs from the CPU ({why}); software"
                    );
                }
            }
        }

        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let pipelines = KERNELS
            .iter()
            .map(|k| {
                let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(k.name),
                    source: wgpu::ShaderSource::Wgsl(Cow::Owned(kernel_source_with(k, binary64))),
                });
                device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(k.name),
                    layout: None,
                    module: &module,
                    entry_point: Some("main"),
                    compilation_options: Default::default(),
                    cache: None,
                })
            })
            .collect();
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(device_error(e));
        }
        Ok(GpuContext {
            device,
            queue,
            info,
            binary64,
            pipelines,
            options: *options,
            buffers: BTreeMap::new(),
            timings: StageTimings::default(),
        })
    }

    /// `name (backend, device type)` of the adapter.
    pub fn adapter_description(&self) -> String {
        format!("{}, {:?}, {:?}", self.info.name, self.info.backend, self.info.device_type)
    }

    /// Whether the adapter is a CPU implementation (such as lavapipe).
    pub fn is_software(&self) -> bool {
        self.info.device_type == wgpu::DeviceType::Cpu
    }

    /// The stage timings of the last [`GpuContext::evaluate`] or
    /// [`GpuContext::resource_columns`] (zero before the first).
    pub fn last_timings(&self) -> StageTimings {
        self.timings
    }

    /// Replaces the tiling knobs.
    pub fn set_options(&mut self, options: GpuOptions) {
        self.options = options;
    }

    /// How a `classes × nodes` matrix would be cut, given the device limits and the options.
    pub fn tiling(&self, classes: usize, nodes: usize) -> Result<Tiling, GpuError> {
        let limits = self.device.limits();
        let ws = u64::from(WORKGROUP_SIZE);
        let max_buffer = limits.max_buffer_size;
        let binding = limits.max_storage_buffer_binding_size.min(max_buffer);
        let nodes = nodes as u64;
        let classes = classes as u64;
        let planes = NUM_SCORE_PLANES as u64;
        let round_up = |x: u64| x.div_ceil(ws) * ws;
        let mut tile = round_up(nodes.max(1));
        tile = tile.min(u64::from(limits.max_compute_workgroups_per_dimension) * ws);
        tile = tile.min(binding / 4 / ws * ws);
        if let Some(t) = self.options.max_tile_nodes {
            tile = tile.min((u64::from(t) / ws).max(1) * ws);
        }
        if tile == 0 {
            return Err(GpuError::TooLarge(format!(
                "a storage binding of {binding} bytes cannot hold one row of a tile"
            )));
        }
        let tiles = nodes.div_ceil(tile).max(1);
        let mut chunk = classes
            .min(u64::from(limits.max_compute_workgroups_per_dimension))
            // One tile's score planes share a binding; a buffer holds every tile.
            .min(binding / (4 * tile * planes))
            .min(max_buffer / (4 * tile * tiles * planes))
            // Per-class planes: row_max and row_min hold one per score plane.
            .min(binding / (4 * planes));
        if let Some(c) = self.options.max_chunk_classes {
            chunk = chunk.min(u64::from(c).max(1));
        }
        if chunk == 0 {
            return Err(GpuError::TooLarge(format!(
                "{nodes} nodes need {} bytes per class row, the device allows {max_buffer}",
                4 * tile * tiles * planes
            )));
        }
        let chunks = classes.div_ceil(chunk).max(1);
        let u = |x: u64| u32::try_from(x).map_err(|_| GpuError::TooLarge(format!("{x} tiles")));
        Ok(Tiling {
            tile_stride: u(tile)?,
            tiles: u(tiles)?,
            chunk_classes: u(chunk)?,
            chunks: u(chunks)?,
        })
    }

    /// A cached buffer of at least `size` bytes with `usage`, grown when too small.
    fn buffer(&mut self, slot: Slot, size: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
        let size = size.max(16).div_ceil(16) * 16;
        if let Some((buf, capacity)) = self.buffers.get(&slot)
            && *capacity >= size
            && buf.usage() == usage
        {
            return buf.clone();
        }
        let buf = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(match slot {
                Slot::Bound(b) | Slot::Staging(b) => b.name(),
            }),
            size,
            usage,
            mapped_at_creation: false,
        });
        self.buffers.insert(slot, (buf.clone(), size));
        buf
    }

    /// Uploads one input buffer (padded to one element when empty).
    fn upload<T: Pod>(&mut self, buf: Buf, data: &[T]) -> Result<wgpu::Buffer, GpuError> {
        let data = nonempty(data);
        let bytes: &[u8] = cast_slice(&data);
        let limit = self.device.limits().max_storage_buffer_binding_size;
        if bytes.len() as u64 > limit {
            return Err(GpuError::TooLarge(format!(
                "{} is {} bytes, a storage binding holds {limit}",
                buf.name(),
                bytes.len()
            )));
        }
        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        let b = self.buffer(Slot::Bound(buf), bytes.len() as u64, usage);
        // write_buffer needs a multiple of 4 bytes; every element is made of u32s.
        self.queue.write_buffer(&b, 0, bytes);
        Ok(b)
    }

    /// Evaluates every cell on the GPU.
    pub fn evaluate(&mut self, p: &Prepared<'_>) -> Result<Matrix, GpuError> {
        let results = RawResults::new(p.num_classes, p.num_classes * p.num_nodes);
        self.evaluate_job(p, Job::Matrix, results)
    }

    /// Evaluates every cell on the GPU into the lean form ([`Matrix::lean`], keeping the
    /// normalized planes of `keep`'s plugins). The kernels are [`GpuContext::evaluate`]'s; the
    /// raw score planes and NodeResourcesFit's reason words stay on the device: of the
    /// `3 + 2·P` cell planes of a full readback (`P` score planes) `2 + P` come back.
    pub fn evaluate_lean(
        &mut self,
        p: &Prepared<'_>,
        keep: &[PluginName],
    ) -> Result<LeanMatrix, GpuError> {
        let results = RawResults::without_raw(p.num_classes, p.num_classes * p.num_nodes);
        Ok(self.evaluate_job(p, Job::Lean, results)?.lean(keep))
    }

    /// Runs a whole-matrix `job` into `results` (nothing to run without cells).
    fn evaluate_job(
        &mut self,
        p: &Prepared<'_>,
        job: Job<'_>,
        mut results: RawResults,
    ) -> Result<Matrix, GpuError> {
        let (nc, nn) = (p.num_classes, p.num_nodes);
        self.timings = StageTimings::default();
        if nc > 0 && nn > 0 {
            let tiling = self.tiling(nc, nn)?;
            self.scoped(p, job, tiling, &mut results)?;
        }
        Ok(results.into_matrix(p))
    }

    /// The incremental entry point on the device: the usage-dependent cells (NodeResourcesFit's
    /// filter word and raw score, NodeResourcesBalancedAllocation's raw score) of every class
    /// on the nodes of `usage`, with their usage replaced by `usage`'s. Only the two kernels
    /// run, over `classes × usage.nodes` cells; the node columns are uploaded, nothing else of
    /// the nodes. Equal to [`crate::eval::columns::evaluate_cpu`] bit for bit.
    pub fn resource_columns(
        &mut self,
        p: &Prepared<'_>,
        usage: &NodeUsage,
    ) -> Result<ResourceColumns, GpuError> {
        let (nc, k) = (p.num_classes, usage.nodes.len());
        let mut results = RawResults::new(nc, nc * k);
        self.timings = StageTimings::default();
        if nc > 0 && k > 0 {
            let mut allocatable = Vec::with_capacity(k * usage.num_resources);
            for &n in &usage.nodes {
                allocatable.extend(p.enc.tensors.node_allocatable.row(n).iter().copied());
            }
            let columns = ColumnInputs {
                allocatable,
                requested: &usage.requested,
                nonzero_requested: &usage.nonzero_requested,
                num_nodes: k,
            };
            let tiling = self.tiling(nc, k)?;
            self.scoped(p, Job::Columns(&columns), tiling, &mut results)?;
        }
        Ok(ResourceColumns::from_planes(
            usage.nodes.clone(),
            nc,
            results.fit_insufficient,
            std::mem::take(&mut results.raw[ScorePlugin::NodeResourcesFit.index()]),
            std::mem::take(&mut results.raw[ScorePlugin::BalancedAllocation.index()]),
        ))
    }

    /// Runs `job` inside validation and out-of-memory error scopes.
    fn scoped(
        &mut self,
        p: &Prepared<'_>,
        job: Job<'_>,
        tiling: Tiling,
        results: &mut RawResults,
    ) -> Result<(), GpuError> {
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let outcome = self.run(p, job, tiling, results);
        let validation = pollster::block_on(validation.pop());
        let oom = pollster::block_on(oom.pop());
        let outcome = match validation.or(oom) {
            Some(e) => Err(device_error(e)),
            None => outcome,
        };
        if outcome.is_err() {
            // A failed evaluation may leave staging buffers mapped or buffers invalid: start the
            // next one with fresh buffers.
            self.buffers.clear();
        }
        outcome
    }

    fn run(
        &mut self,
        p: &Prepared<'_>,
        job: Job<'_>,
        tiling: Tiling,
        results: &mut RawResults,
    ) -> Result<(), GpuError> {
        let nc = p.num_classes;
        let nn = match &job {
            Job::Matrix | Job::Lean => p.num_nodes,
            Job::Columns(c) => c.num_nodes,
        };
        let Tiling { tile_stride, tiles, chunk_classes, chunks } = tiling;
        let g = &p.enc.gpu;
        let started = Instant::now();
        let eval = eval_buffers(p);
        // The kernels this job runs, and the buffers they bind.
        let selected: Vec<usize> = (0..KERNELS.len())
            .filter(|&k| match &job {
                Job::Matrix | Job::Lean => true,
                Job::Columns(_) => COLUMN_KERNELS.contains(&KERNELS[k].name),
            })
            .collect();
        let needed: std::collections::BTreeSet<Buf> =
            selected.iter().flat_map(|&k| KERNELS[k].bindings.iter().copied()).collect();
        let (node_allocatable, node_requested, node_nonzero_requested) = match &job {
            Job::Matrix | Job::Lean => {
                (&g.node_allocatable[..], &g.node_requested[..], &g.node_nonzero_requested[..])
            }
            Job::Columns(c) => (&c.allocatable[..], c.requested, c.nonzero_requested),
        };

        // Inputs.
        let mut bound: BTreeMap<Buf, wgpu::Buffer> = BTreeMap::new();
        macro_rules! upload {
            ($($buf:ident: $data:expr),* $(,)?) => {
                $( if needed.contains(&Buf::$buf) {
                    let b = self.upload(Buf::$buf, $data)?;
                    bound.insert(Buf::$buf, b);
                } )*
            };
        }
        upload!(
            Nodes: &g.nodes,
            Classes: &g.classes,
            NodeAllocatable: node_allocatable,
            NodeRequested: node_requested,
            NodeNonzeroRequested: node_nonzero_requested,
            ClassRequests: &g.class_requests,
            ClassNonzeroRequests: &g.class_nonzero_requests,
            NodeLabelIds: &g.node_label_ids,
            NodeTaintIds: &g.node_taint_ids,
            NodePortIds: &g.node_port_ids,
            ClassToleratedTaintIds: &g.class_tolerated_taint_ids,
            ClassPortIds: &g.class_port_ids,
            ClassSelectorReqIds: &g.class_selector_req_ids,
            ClassRequiredTermIds: &g.class_required_term_ids,
            ClassPreferredTerms: &g.class_preferred_terms,
            Requirements: &g.requirements,
            RequirementSets: &g.requirement_sets,
            NodeTerms: &g.node_terms,
            NodeTermReqIds: &g.node_term_req_ids,
            TaintEffects: &g.taint_effects,
            HostPorts: &g.host_ports,
            EvalClasses: &eval.classes,
            EvalNodes: &eval.nodes,
            ClassRestrictIds: &eval.restrict_ids,
            FitColumns: &eval.fit_columns,
            FitSpecs: &eval.fit_specs,
            Shape: &eval.shape,
            BalancedSpecs: &eval.balanced_specs,
            ClassImageIds: &eval.class_image_ids,
            NodeImages: &eval.node_images,
            EvalTopoClasses: &eval.topo_classes,
            TopoTerms: &eval.topo_terms,
            TopoEntries: &eval.topo_entries,
            NodeDomains: &eval.node_domains,
            PtsWeightTable: &eval.pts_weight_table,
        );

        // Scratch: PodTopologySpread's domain bitmaps (cleared once: each class only touches
        // its own words) and weights, and its per-class scored-node counts.
        let scratch_usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        if needed.contains(&Buf::PtsDomainBits) {
            let binding_limit = self.device.limits().max_storage_buffer_binding_size;
            let bitmap_bytes = u64::from(p.topology.bitmap_words.max(1)) * 4;
            if bitmap_bytes > binding_limit {
                return Err(GpuError::TooLarge(format!(
                    "PodTopologySpread domain bitmaps need {bitmap_bytes} bytes, a storage \
                     binding holds {binding_limit}"
                )));
            }
            let bits = self.buffer(Slot::Bound(Buf::PtsDomainBits), bitmap_bytes, scratch_usage);
            bound.insert(Buf::PtsDomainBits, bits);
        }
        if needed.contains(&Buf::PtsWeights) {
            let weights_bytes = (p.topology.terms.len().max(1) * 8) as u64;
            let weights_buf =
                self.buffer(Slot::Bound(Buf::PtsWeights), weights_bytes, scratch_usage);
            bound.insert(Buf::PtsWeights, weights_buf);
        }
        if needed.contains(&Buf::PtsScored) {
            let scored = self.buffer(
                Slot::Bound(Buf::PtsScored),
                u64::from(chunk_classes) * 4,
                scratch_usage,
            );
            bound.insert(Buf::PtsScored, scored);
        }

        // Planes.
        let cells = u64::from(chunk_classes) * u64::from(tile_stride);
        let region = cells * 4;
        let plane_bytes = region * u64::from(tiles);
        let plane_usage = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST;
        let per_class = u64::from(chunk_classes) * 4;
        let sizes: Vec<(Buf, u64)> = READBACK
            .iter()
            .filter(|b| needed.contains(b))
            .map(|&b| (b, b.cell_planes() * plane_bytes + b.class_planes() * per_class))
            .collect();
        for &(b, size) in &sizes {
            let buf = self.buffer(Slot::Bound(b), size, plane_usage);
            bound.insert(b, buf);
        }
        let staging_usage = wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST;
        let staging: Vec<(Buf, u64, wgpu::Buffer)> = sizes
            .iter()
            .filter(|(b, _)| job.reads_back(*b))
            .map(|&(b, size)| (b, size, self.buffer(Slot::Staging(b), size, staging_usage)))
            .collect();
        let params_usage = wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST;
        let params_buf =
            self.buffer(Slot::Bound(Buf::Params), PARAMS_SLOT * u64::from(tiles), params_usage);

        self.timings.upload += started.elapsed();

        // Bind groups: per kernel, per tile.
        let started = Instant::now();
        let params_size = wgpu::BufferSize::new(size_of::<EvalParams>() as u64);
        let mut groups: Vec<Vec<wgpu::BindGroup>> = Vec::new();
        for &k in &selected {
            let kernel = &KERNELS[k];
            let layout = self.pipelines[k].get_bind_group_layout(0);
            let mut per_tile = Vec::new();
            for t in 0..u64::from(tiles) {
                let entries: Vec<wgpu::BindGroupEntry<'_>> = kernel
                    .bindings
                    .iter()
                    .enumerate()
                    .map(|(i, &b)| {
                        let resource = if b == Buf::Params {
                            wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                                buffer: &params_buf,
                                offset: t * PARAMS_SLOT,
                                size: params_size,
                            })
                        } else if b.cell_planes() > 0 {
                            let planes = b.cell_planes();
                            wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                                buffer: &bound[&b],
                                offset: t * planes * region,
                                size: wgpu::BufferSize::new(planes * region),
                            })
                        } else {
                            bound[&b].as_entire_binding()
                        };
                        wgpu::BindGroupEntry { binding: i as u32, resource }
                    })
                    .collect();
                per_tile.push(self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some(kernel.name),
                    layout: &layout,
                    entries: &entries,
                }));
            }
            groups.push(per_tile);
        }
        self.timings.bind += started.elapsed();

        let mut weights = [[0i32; 4]; 2];
        let mut score_mask = 0u32;
        for &(plugin, weight) in &p.scores {
            let k = plugin.index();
            weights[k / 4][k % 4] = weight as i32;
            score_mask |= plugin.bit();
        }
        let mut check_order = [[0u32; 4]; 4];
        for (i, c) in p.check_order.iter().take(MAX_CHECKS).enumerate() {
            check_order[i / 4][i % 4] = c.index();
        }

        for chunk in 0..chunks {
            let started = Instant::now();
            let class_start = chunk * chunk_classes;
            let class_len = chunk_classes.min(nc as u32 - class_start);
            let mut slots = vec![0u8; (PARAMS_SLOT * u64::from(tiles)) as usize];
            for t in 0..tiles {
                let tile_start = t * tile_stride;
                let params = EvalParams {
                    tile_start,
                    tile_len: tile_stride.min(nn as u32 - tile_start),
                    tile_stride,
                    class_start,
                    class_len,
                    class_stride: chunk_classes,
                    num_nodes: nn as u32,
                    num_classes: nc as u32,
                    num_resources: p.resource_names.len() as u32,
                    enabled_checks: p.enabled_checks,
                    num_checks: p.check_order.len().min(MAX_CHECKS) as u32,
                    fit_strategy: p.fit_strategy,
                    num_fit_specs: p.fit_specs.len() as u32,
                    num_shape: p.shape.len() as u32,
                    score_mask,
                    num_balanced_specs: p.balanced_specs.len() as u32,
                    num_topology_keys: p.topology.num_keys() as u32,
                    fence: 0,
                    _pad2: 0,
                    _pad3: 0,
                    weights,
                    check_order,
                };
                let at = (u64::from(t) * PARAMS_SLOT) as usize;
                slots[at..at + size_of::<EvalParams>()].copy_from_slice(bytes_of(&params));
            }
            self.queue.write_buffer(&params_buf, 0, &slots);
            let min = vec![i32::MIN; chunk_classes as usize];
            let row_min = vec![i32::MAX; NUM_SCORE_PLANES * chunk_classes as usize];
            let mut row_max = vec![i32::MIN; NUM_SCORE_PLANES * chunk_classes as usize];
            // PodTopologySpread's maximum starts at 0, as upstream's.
            let pts = ScorePlugin::PodTopologySpread.index() * chunk_classes as usize;
            for m in &mut row_max[pts..pts + chunk_classes as usize] {
                *m = 0;
            }
            let zero = vec![0u32; chunk_classes as usize];
            for (b, data) in [
                (Buf::RowMax, cast_slice::<i32, u8>(&row_max)),
                (Buf::RowMin, cast_slice(&row_min)),
                (Buf::BestTotal, cast_slice(&min)),
                (Buf::FeasibleCount, cast_slice(&zero)),
                (Buf::PtsScored, cast_slice(&zero)),
            ] {
                if let Some(buf) = bound.get(&b) {
                    self.queue.write_buffer(buf, 0, data);
                }
            }
            self.timings.upload += started.elapsed();
            let started = Instant::now();

            let mut encoder = self
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("eval") });
            encoder.clear_buffer(&bound[&Buf::CellFilter], 0, None);
            if chunk == 0
                && let Some(bits) = bound.get(&Buf::PtsDomainBits)
            {
                encoder.clear_buffer(bits, 0, None);
            }
            // One compute pass for every kernel: WebGPU makes each dispatch a usage scope of
            // its own, so a dispatch sees the storage writes of the ones before it.
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("eval"),
                timestamp_writes: None,
            });
            for (slot, &k) in selected.iter().enumerate() {
                let kernel = &KERNELS[k];
                pass.set_pipeline(&self.pipelines[k]);
                if kernel.per_class {
                    // Tile 0's parameters carry the chunk's classes.
                    pass.set_bind_group(0, &groups[slot][0], &[]);
                    pass.dispatch_workgroups(1, class_len, 1);
                    continue;
                }
                for t in 0..tiles {
                    let tile_len = tile_stride.min(nn as u32 - t * tile_stride);
                    pass.set_bind_group(0, &groups[slot][t as usize], &[]);
                    pass.dispatch_workgroups(tile_len.div_ceil(WORKGROUP_SIZE), class_len, 1);
                }
            }
            drop(pass);
            for (b, size, dst) in &staging {
                encoder.copy_buffer_to_buffer(&bound[b], 0, dst, 0, *size);
            }
            self.queue.submit([encoder.finish()]);

            let (tx, rx) = mpsc::channel();
            for (b, size, dst) in &staging {
                let tx = tx.clone();
                let b = *b;
                dst.map_async(wgpu::MapMode::Read, 0..*size, move |r| {
                    let _ = tx.send((b, r));
                });
            }
            drop(tx);
            self.device
                .poll(wgpu::PollType::wait_indefinitely())
                .map_err(|e| GpuError::Readback(e.to_string()))?;
            self.timings.dispatch += started.elapsed();
            let started = Instant::now();
            for (b, r) in rx.iter() {
                r.map_err(|e| GpuError::Readback(format!("{}: {e}", b.name())))?;
            }
            for (b, size, dst) in &staging {
                let at = Scatter { nn, tile_stride, tiles, chunk_classes, class_start, class_len };
                {
                    let view = dst
                        .get_mapped_range(0..*size)
                        .map_err(|e| GpuError::Readback(format!("{}: {e}", b.name())))?;
                    // The mapped words as they are where the host is little-endian (and the
                    // mapping 4-byte aligned, as wgpu's are); a converted copy otherwise.
                    match bytemuck::try_cast_slice::<u8, u32>(&view) {
                        Ok(words) if cfg!(target_endian = "little") => {
                            scatter(results, *b, words, at);
                        }
                        _ => scatter(results, *b, &words_of(&view), at),
                    }
                }
                dst.unmap();
            }
            self.timings.readback += started.elapsed();
        }
        Ok(())
    }
}

/// The kernels of a [`Job::Columns`] run: the usage-dependent ones.
const COLUMN_KERNELS: [&str; 2] = ["node_resources_fit", "balanced_allocation"];

/// The node columns of a [`Job::Columns`] run, `k × R` each, row-major.
struct ColumnInputs<'u> {
    allocatable: Vec<u32>,
    requested: &'u [u32],
    nonzero_requested: &'u [u32],
    num_nodes: usize,
}

/// What one run computes.
enum Job<'u> {
    /// Every cell of the matrix, with the reductions.
    Matrix,
    /// As `Matrix`, reading back only what [`LeanMatrix`] holds ([`GpuContext::evaluate_lean`]).
    Lean,
    /// The usage-dependent kernels over some node columns ([`GpuContext::resource_columns`]).
    Columns(&'u ColumnInputs<'u>),
}

impl Job<'_> {
    /// Whether the run copies `b` back to the host.
    fn reads_back(&self, b: Buf) -> bool {
        match self {
            Job::Lean => !matches!(b, Buf::Raw | Buf::FitInsufficient),
            Job::Matrix | Job::Columns(_) => true,
        }
    }
}

#[cfg(test)]
mod tests;

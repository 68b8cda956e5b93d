//! The device check of the binary64 library: `shaders/f64_selftest.wgsl` runs every operation
//! of a context's binary64 (software, or native where provably identical) on pairs of bit
//! patterns, and the results are compared with the CPU's `f64`.
//!
//! Input: pairs of bit patterns ([`binary64_inputs`] makes the standard set). Output: per pair
//! the [`F64_SELFTEST_RESULTS`] results, and the mismatches against native `f64`
//! ([`binary64_mismatches`]). [`GpuContext::new`] runs it on native binary64 before using it; the
//! device tests run it on both. No upstream counterpart.

use std::borrow::Cow;
use std::sync::mpsc;

use bytemuck::cast_slice;

use super::kernels::{Binary64, F64_SELFTEST_RESULTS, f64_selftest_source_with};
use super::types::WORKGROUP_SIZE;
use super::{GpuContext, GpuError, device_error, words_of};

impl GpuContext {
    /// Runs every operation of the context's binary64 library ([`GpuContext::binary64`]) on
    /// the device for each `(a, b)` pair of bit patterns and returns the
    /// [`F64_SELFTEST_RESULTS`] results of each, as bit patterns (see
    /// `shaders/f64_selftest.wgsl` for their order; [`binary64_mismatches`] compares them with
    /// the CPU's `f64`).
    pub fn f64_selftest(
        &mut self,
        inputs: &[(u64, u64)],
    ) -> Result<Vec<[u64; F64_SELFTEST_RESULTS]>, GpuError> {
        selftest(&self.device, &self.queue, self.binary64, inputs)
    }
}

/// [`GpuContext::f64_selftest`] on a device that is not yet a context (the start-up check).
pub(super) fn selftest(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    binary64: Binary64,
    inputs: &[(u64, u64)],
) -> Result<Vec<[u64; F64_SELFTEST_RESULTS]>, GpuError> {
    const K: usize = F64_SELFTEST_RESULTS;
    if inputs.is_empty() {
        return Ok(Vec::new());
    }
    let words: Vec<u32> = inputs
        .iter()
        .flat_map(|&(a, b)| [a as u32, (a >> 32) as u32, b as u32, (b >> 32) as u32])
        .collect();
    let groups = u32::try_from(inputs.len().div_ceil(WORKGROUP_SIZE as usize))
        .map_err(|_| GpuError::TooLarge(format!("{} self-test inputs", inputs.len())))?;
    if groups > device.limits().max_compute_workgroups_per_dimension {
        return Err(GpuError::TooLarge(format!("{} self-test inputs", inputs.len())));
    }
    let out_size = (inputs.len() * K * 8) as u64;
    let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("f64_selftest"),
        source: wgpu::ShaderSource::Wgsl(Cow::Owned(f64_selftest_source_with(binary64))),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("f64_selftest"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let input = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("f64_inputs"),
        size: (words.len() * 4) as u64,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    queue.write_buffer(&input, 0, cast_slice(&words));
    let output = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("f64_outputs"),
        size: out_size,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("f64_staging"),
        size: out_size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    // The native library's fence: a uniform of zeros (see f64_native.wgsl).
    let fence = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("f64_fence"),
        size: 16,
        usage: wgpu::BufferUsages::UNIFORM,
        mapped_at_creation: false,
    });
    let mut entries = vec![
        wgpu::BindGroupEntry { binding: 0, resource: input.as_entire_binding() },
        wgpu::BindGroupEntry { binding: 1, resource: output.as_entire_binding() },
    ];
    if binary64 == Binary64::Native {
        entries.push(wgpu::BindGroupEntry { binding: 2, resource: fence.as_entire_binding() });
    }
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("f64_selftest"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &entries,
    });
    let mut encoder =
        device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("f64") });
    {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("f64_selftest"),
            timestamp_writes: None,
        });
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups(groups, 1, 1);
    }
    encoder.copy_buffer_to_buffer(&output, 0, &staging, 0, out_size);
    queue.submit([encoder.finish()]);
    if let Some(e) = pollster::block_on(validation.pop()) {
        return Err(device_error(e));
    }
    let (tx, rx) = mpsc::channel();
    staging.map_async(wgpu::MapMode::Read, 0..out_size, move |r| {
        let _ = tx.send(r);
    });
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| GpuError::Readback(e.to_string()))?;
    rx.recv()
        .map_err(|e| GpuError::Readback(e.to_string()))?
        .map_err(|e| GpuError::Readback(e.to_string()))?;
    let words = {
        let view =
            staging.get_mapped_range(0..out_size).map_err(|e| GpuError::Readback(e.to_string()))?;
        words_of(&view)
    };
    staging.unmap();
    Ok(words
        .chunks_exact(2 * K)
        .map(|r| std::array::from_fn(|k| u64::from(r[2 * k]) | u64::from(r[2 * k + 1]) << 32))
        .collect())
}

/// SplitMix64: a small deterministic generator for the inputs.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Binary64 inputs: every pair of special values, then `random` pairs mixing raw bit patterns,
/// ratios of small integers, scaled integers and neighbours (a few ulps away) of all of these.
pub fn binary64_inputs(random: usize) -> Vec<(u64, u64)> {
    let special: Vec<f64> = vec![
        0.0,
        -0.0,
        f64::from_bits(1),
        f64::from_bits(0x000F_FFFF_FFFF_FFFF),
        f64::MIN_POSITIVE,
        f64::MIN_POSITIVE * 1.5,
        f64::MIN_POSITIVE * 4.0,
        f64::MAX,
        -f64::MAX,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        1.0,
        -1.0,
        0.5,
        2.5,
        -2.5,
        0.1,
        0.68,
        3.0,
        100.0,
        4503599627370495.5,
        9007199254740993.0,
        9.223372036854775e18,
        -9.223372036854776e18,
        1e-310,
    ];
    let mut out: Vec<(u64, u64)> = Vec::new();
    for a in &special {
        for b in &special {
            out.push((a.to_bits(), b.to_bits()));
        }
    }
    let mut state = 0x5EED_u64;
    let value = |state: &mut u64| -> u64 {
        let r = splitmix(state);
        let v = match r % 4 {
            0 => splitmix(state),
            1 => {
                let a = (splitmix(state) % 4000) as f64 - 2000.0;
                let b = (splitmix(state) % 2000 + 1) as f64;
                (a / b).to_bits()
            }
            2 => {
                let m = splitmix(state) as i32;
                let e = (splitmix(state) % 2200) as i32 - 1100;
                (f64::from(m) * 2f64.powi(e)).to_bits()
            }
            _ => special[(splitmix(state) % special.len() as u64) as usize].to_bits(),
        };
        let ulps = (splitmix(state) % 7) as i64 - 3;
        (v as i64).wrapping_add(ulps) as u64
    };
    for _ in 0..random {
        let a = value(&mut state);
        let b = value(&mut state);
        out.push((a, b));
    }
    out
}

/// Every result of [`GpuContext::f64_selftest`] that differs from the CPU's `f64` (any NaN
/// equals any NaN), described; empty when the device computed exactly as the CPU.
pub fn binary64_mismatches(
    inputs: &[(u64, u64)],
    results: &[[u64; F64_SELFTEST_RESULTS]],
) -> Vec<String> {
    let same = |got: u64, want: f64| {
        (f64::from_bits(got).is_nan() && want.is_nan()) || got == want.to_bits()
    };
    let mut failures = Vec::new();
    if inputs.len() != results.len() {
        failures.push(format!("{} results for {} inputs", results.len(), inputs.len()));
    }
    for (&(a_bits, b_bits), r) in inputs.iter().zip(results) {
        let (a, b) = (f64::from_bits(a_bits), f64::from_bits(b_bits));
        let want = [
            ("+", a + b),
            ("-", a - b),
            ("*", a * b),
            ("/", a / b),
            ("sqrt", a.sqrt()),
            ("round", a.round()),
            ("from_i64", a_bits as i64 as f64),
            ("from_u64", a_bits as f64),
        ];
        let got = [r[0], r[1], r[2], r[3], r[4], r[5], r[7], r[8]];
        for ((op, w), g) in want.iter().zip(got) {
            if !same(g, *w) {
                failures.push(format!("{op} {a:e} ({a_bits:#x}), {b:e} ({b_bits:#x}): {g:#x}"));
            }
        }
        if r[6] as i64 != a as i64 {
            failures.push(format!("{a:e} as i64: {}", r[6] as i64));
        }
        if (r[9] != 0) != (a < b) {
            failures.push(format!("{a:e} < {b:e}: {}", r[9]));
        }
    }
    failures
}

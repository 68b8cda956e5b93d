//! Device-free checks of the shaders: the generated prelude is up to date, every kernel parses
//! and validates with naga (the naga wgpu 30 uses), its bindings carry the host's buffer names,
//! and every WGSL struct has the layout of its `#[repr(C)]` Rust twin.

use std::mem::offset_of;
use std::path::PathBuf;

use naga::valid::{Capabilities, ValidationFlags, Validator};

use super::kernels::{
    Binary64, F64_NATIVE_FUNCTIONS, F64_NATIVE_WGSL, F64_WGSL, KERNELS, TYPES_WGSL,
    f64_selftest_source, f64_selftest_source_with, kernel_source, kernel_source_with,
    max_storage_buffers,
};
use super::types::*;
use crate::encode::gpu_types::*;

fn parse(name: &str, source: &str) -> naga::Module {
    parse_with_info(name, source).0
}

fn parse_with_info(name: &str, source: &str) -> (naga::Module, naga::valid::ModuleInfo) {
    let module = naga::front::wgsl::parse_str(source)
        .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(source)));
    let info = Validator::new(ValidationFlags::all(), Capabilities::default())
        .validate(&module)
        .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(source)));
    (module, info)
}

#[test]
fn the_types_file_is_the_generated_prelude() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("shaders/types.wgsl");
    let want = wgsl_prelude();
    if std::env::var_os("KPLACE_BLESS_SHADERS").is_some() {
        std::fs::write(&path, &want).expect("writes shaders/types.wgsl");
        return;
    }
    assert!(
        TYPES_WGSL == want,
        "shaders/types.wgsl is stale: run `KPLACE_BLESS_SHADERS=1 cargo test --lib eval::gpu`"
    );
}

#[test]
fn every_kernel_parses_and_validates_with_naga() {
    for kernel in &KERNELS {
        let module = parse(kernel.name, &kernel_source(kernel));
        let entry: Vec<&str> = module.entry_points.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(entry, ["main"], "{}: one entry point, main", kernel.name);
        let ep = &module.entry_points[0];
        assert_eq!(ep.workgroup_size, [WORKGROUP_SIZE, 1, 1], "{}", kernel.name);
    }
}

fn parse_native(name: &str, source: &str) -> naga::Module {
    let module = naga::front::wgsl::parse_str(source)
        .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(source)));
    Validator::new(ValidationFlags::all(), Capabilities::FLOAT64 | Capabilities::SHADER_INT64)
        .validate(&module)
        .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(source)));
    module
}

#[test]
fn every_kernel_parses_and_validates_with_native_binary64() {
    for kernel in &KERNELS {
        let module = parse_native(kernel.name, &kernel_source_with(kernel, Binary64::Native));
        assert_eq!(module.entry_points.len(), 1, "{}", kernel.name);
    }
    let selftest = parse_native("f64_selftest", &f64_selftest_source_with(Binary64::Native));
    assert_eq!(selftest.entry_points.len(), 1);
}

#[test]
fn native_binary64_replaces_each_of_its_functions_once_and_keeps_the_software_one() {
    let library = Binary64::Native.library();
    for name in F64_NATIVE_FUNCTIONS {
        assert_eq!(F64_WGSL.matches(&format!("fn {name}(")).count(), 1, "f64.wgsl defines {name}");
        assert_eq!(F64_NATIVE_WGSL.matches(&format!("fn {name}(")).count(), 1, "native {name}");
        assert_eq!(library.matches(&format!("fn {name}(")).count(), 1, "one {name} in the kernel");
        assert_eq!(library.matches(&format!("fn soft_{name}(")).count(), 1, "soft_{name}");
    }
    // The native library defines nothing else of f64.wgsl's (a second definition would not
    // compile) and nothing that is not in it besides its own helpers.
    let module = parse_native("native library", &f64_selftest_source_with(Binary64::Native));
    for (_, f) in module.functions.iter() {
        let name = f.name.as_deref().unwrap_or_default();
        if F64_NATIVE_WGSL.contains(&format!("fn {name}(")) && !name.starts_with("f64n_") {
            assert!(
                name.starts_with("u64n_") || F64_NATIVE_FUNCTIONS.contains(&name),
                "f64_native.wgsl defines {name}, which is not in F64_NATIVE_FUNCTIONS"
            );
        }
    }
    assert_eq!(Binary64::Software.library(), F64_WGSL);
}

#[test]
fn the_binary64_library_and_its_self_test_parse_and_validate_with_naga() {
    let library = parse("f64.wgsl", F64_WGSL);
    assert!(library.entry_points.is_empty(), "f64.wgsl is a library without entry points");
    for name in ["f64_add", "f64_sub", "f64_mul", "f64_div", "f64_sqrt", "f64_round", "f64_to_i64"]
    {
        assert!(
            library.functions.iter().any(|(_, f)| f.name.as_deref() == Some(name)),
            "f64.wgsl defines {name}"
        );
    }
    let selftest = parse("f64_selftest.wgsl", &f64_selftest_source());
    assert_eq!(selftest.entry_points.len(), 1);
    assert_eq!(selftest.entry_points[0].workgroup_size, [WORKGROUP_SIZE, 1, 1]);
}

#[test]
fn every_binding_holds_the_buffer_the_host_binds_there() {
    for kernel in &KERNELS {
        let module = parse(kernel.name, &kernel_source(kernel));
        let mut bound: Vec<(u32, String)> = module
            .global_variables
            .iter()
            .filter_map(|(_, v)| {
                let b = v.binding.as_ref()?;
                assert_eq!(b.group, 0, "{}: everything is in group 0", kernel.name);
                Some((b.binding, v.name.clone().unwrap_or_default()))
            })
            .collect();
        bound.sort();
        let want: Vec<(u32, String)> = kernel
            .bindings
            .iter()
            .enumerate()
            .map(|(i, b)| (i as u32, b.name().to_string()))
            .collect();
        assert_eq!(bound, want, "{}: bindings", kernel.name);
        // wgpu derives each pipeline's layout from the bindings `main` uses: one it does not
        // use would vanish from the layout and the host's bind group would no longer fit.
        let (module, info) = parse_with_info(kernel.name, &kernel_source(kernel));
        let uses = info.get_entry_point(0);
        for (handle, var) in module.global_variables.iter() {
            if var.binding.is_some() {
                assert!(
                    !uses[handle].is_empty(),
                    "{}: main never uses binding {:?}",
                    kernel.name,
                    var.name
                );
            }
        }
    }
    assert!(max_storage_buffers() <= 15, "the widest kernel binds at most 15 storage buffers");
}

/// `(struct, size, [(field, offset)])`, padding fields left out.
type Layout = (&'static str, usize, Vec<(&'static str, usize)>);

fn rust_layouts() -> Vec<Layout> {
    macro_rules! layout {
        ($t:ident { $($f:ident),* $(,)? }) => {
            (stringify!($t), size_of::<$t>(), vec![$((stringify!($f), offset_of!($t, $f))),*])
        };
    }
    vec![
        layout!(GpuDims {
            num_nodes,
            num_classes,
            num_resources,
            num_topology_keys,
            num_label_keys,
            num_label_pairs,
            num_taints,
            num_images,
            num_host_ports,
            num_requirements,
            num_node_terms,
            num_selectors,
            num_spread,
            num_affinity,
            num_namespaces,
            num_bound_pods,
        }),
        layout!(GpuNode {
            allocatable,
            requested,
            nonzero_requested,
            flags,
            label_start,
            label_count,
            taint_start,
            taint_count,
            image_start,
            image_count,
            port_start,
            port_count,
            bound_pod_start,
            bound_pod_count,
        }),
        layout!(GpuClass {
            requests,
            nonzero_requests,
            flags,
            priority,
            size,
            namespace_id,
            label_start,
            label_count,
            tolerated_taint_start,
            tolerated_taint_count,
            port_start,
            port_count,
            image_start,
            image_count,
            selector_req_start,
            selector_req_count,
            required_term_start,
            required_term_count,
            preferred_term_start,
            preferred_term_count,
            spread_start,
            spread_count,
            affinity_start,
            affinity_count,
            default_spread_selector,
            node_name,
        }),
        layout!(GpuRange { start, count, flags }),
        layout!(GpuRequirement { flags, key, pair_lo, pair_hi, set_start, set_count }),
        layout!(GpuWeightedTerm { term, weight }),
        layout!(GpuSpread { topology_key, max_skew, min_domains, flags, selector }),
        layout!(GpuAffinity {
            kind,
            weight,
            topology_key,
            selector,
            namespace_start,
            namespace_count,
            flags,
        }),
        layout!(GpuHostPort { port, protocol, ip, flags }),
        layout!(GpuImage { size_lo, size_hi, num_nodes }),
        layout!(GpuBoundPod { node, namespace_id, priority, label_start, label_count }),
        layout!(EvalParams {
            tile_start,
            tile_len,
            tile_stride,
            class_start,
            class_len,
            class_stride,
            num_nodes,
            num_classes,
            num_resources,
            enabled_checks,
            num_checks,
            fit_strategy,
            num_fit_specs,
            num_shape,
            score_mask,
            num_balanced_specs,
            num_topology_keys,
            fence,
            weights,
            check_order,
        }),
        layout!(EvalClass {
            flags,
            node_name,
            restrict_start,
            restrict_count,
            score_skip,
            image_start,
            image_count,
        }),
        layout!(EvalNode { flags, added_score, image_start, image_count }),
        layout!(EvalNodeImage { image, size_lo, size_hi, num_nodes }),
        layout!(EvalTopoClass {
            pts_flags,
            pts_filter_start,
            pts_filter_count,
            pts_score_start,
            pts_score_count,
            ipa_flags,
            ipa_affinity_start,
            ipa_affinity_count,
            ipa_anti_start,
            ipa_anti_count,
            ipa_existing_start,
            ipa_existing_count,
            ipa_score_start,
            ipa_score_count,
        }),
        layout!(EvalTopoTerm {
            key,
            entry_start,
            entry_count,
            flags,
            skew,
            min_match,
            bitmap_start,
            bitmap_words,
        }),
        layout!(EvalFitSpec { column, kind, weight }),
        layout!(EvalShapePoint { utilization, score }),
    ]
}

#[test]
fn every_wgsl_struct_has_the_layout_of_its_rust_twin() {
    let module = parse("types.wgsl", TYPES_WGSL);
    let mut layouter = naga::proc::Layouter::default();
    layouter.update(module.to_ctx()).expect("lays out");
    let rust = rust_layouts();
    let mut seen = Vec::new();
    for (handle, ty) in module.types.iter() {
        let naga::TypeInner::Struct { members, span } = &ty.inner else { continue };
        let name = ty.name.clone().unwrap_or_default();
        let Some((_, size, fields)) = rust.iter().find(|(n, _, _)| *n == name) else {
            panic!("WGSL struct {name} has no Rust twin in this test");
        };
        seen.push(name.clone());
        assert_eq!(*span as usize, *size, "{name}: size");
        assert_eq!(layouter[handle].size as usize, *size, "{name}: laid-out size");
        for m in members {
            let field = m.name.clone().unwrap_or_default();
            if field.starts_with("_pad") {
                continue;
            }
            let Some((_, offset)) = fields.iter().find(|(f, _)| *f == field) else {
                panic!("{name}.{field} has no Rust twin");
            };
            assert_eq!(m.offset as usize, *offset, "{name}.{field}: offset");
        }
        for (field, _) in fields {
            assert!(
                members.iter().any(|m| m.name.as_deref() == Some(*field)),
                "{name}.{field} is missing in WGSL"
            );
        }
    }
    for (name, _, _) in &rust {
        assert!(seen.iter().any(|s| s == name), "{name} is missing in shaders/types.wgsl");
    }
}

#[test]
fn the_prelude_declares_every_shared_constant_with_its_rust_value() {
    let module = parse("types.wgsl", TYPES_WGSL);
    for (name, value) in wgsl_constants() {
        let (_, c) = module
            .constants
            .iter()
            .find(|(_, c)| c.name.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("{name} is not declared"));
        let literal = match &module.global_expressions[c.init] {
            naga::Expression::Literal(naga::Literal::U32(v)) => *v,
            other => panic!("{name}: not a u32 literal: {other:?}"),
        };
        assert_eq!(literal, value, "{name}");
    }
}

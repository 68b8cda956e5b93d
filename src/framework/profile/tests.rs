use super::*;
use PluginName::*;

/// v1.35's default plugins after `multiPoint` expansion, written out by hand from
/// `DEFAULT_MULTI_POINT` and each plugin's interfaces (compare upstream's
/// `pkg/scheduler/apis/config/testing/defaults/defaults.go`, `ExpandedPluginsV1`).
fn upstream_expanded_defaults() -> ExpandedPlugins {
    ExpandedPlugins {
        pre_enqueue: vec![SchedulingGates, DynamicResources, DefaultPreemption],
        queue_sort: vec![PrioritySort],
        pre_filter: vec![
            NodeAffinity,
            NodePorts,
            NodeResourcesFit,
            VolumeRestrictions,
            NodeVolumeLimits,
            VolumeBinding,
            VolumeZone,
            PodTopologySpread,
            InterPodAffinity,
            DynamicResources,
        ],
        filter: vec![
            NodeUnschedulable,
            NodeName,
            TaintToleration,
            NodeAffinity,
            NodePorts,
            NodeResourcesFit,
            VolumeRestrictions,
            NodeVolumeLimits,
            VolumeBinding,
            VolumeZone,
            PodTopologySpread,
            InterPodAffinity,
            DynamicResources,
        ],
        post_filter: vec![DynamicResources, DefaultPreemption],
        pre_score: vec![
            TaintToleration,
            NodeAffinity,
            NodeResourcesFit,
            VolumeBinding,
            PodTopologySpread,
            InterPodAffinity,
            NodeResourcesBalancedAllocation,
        ],
        score: vec![
            (TaintToleration, 3),
            (NodeAffinity, 2),
            (NodeResourcesFit, 1),
            (VolumeBinding, 1),
            (PodTopologySpread, 2),
            (InterPodAffinity, 2),
            (DynamicResources, 1),
            (NodeResourcesBalancedAllocation, 1),
            (ImageLocality, 1),
        ],
        reserve: vec![VolumeBinding, DynamicResources],
        permit: vec![],
        pre_bind: vec![VolumeBinding, DynamicResources],
        bind: vec![DefaultBinder],
        post_bind: vec![],
    }
}

fn entry(name: PluginName, weight: Option<i32>) -> EnabledPlugin {
    EnabledPlugin { name, weight, origin: None }
}

fn set(enabled: &[(PluginName, Option<i32>)], disabled: &[&str]) -> PluginSet {
    PluginSet {
        enabled: enabled.iter().map(|(n, w)| entry(*n, *w)).collect(),
        disabled: disabled.iter().map(|d| (*d).to_string()).collect(),
    }
}

fn resolve(custom: PluginsConfig) -> Result<ExpandedPlugins, Vec<PluginError>> {
    expand(&merge_plugins(&default_plugins(), &custom))
}

#[test]
fn default_profile_matches_upstream_expanded_defaults() {
    let p = Profile::default_profile();
    let want = upstream_expanded_defaults();
    assert_eq!(p.scheduler_name, "default-scheduler");
    for ep in ExtensionPoint::ALL {
        let got = p.plugins_at(ep);
        let want_list = match ep {
            ExtensionPoint::PreEnqueue => want.pre_enqueue.clone(),
            ExtensionPoint::QueueSort => want.queue_sort.clone(),
            ExtensionPoint::PreFilter => want.pre_filter.clone(),
            ExtensionPoint::Filter => want.filter.clone(),
            ExtensionPoint::PostFilter => want.post_filter.clone(),
            ExtensionPoint::PreScore => want.pre_score.clone(),
            ExtensionPoint::Score => want.score.iter().map(|(p, _)| *p).collect(),
            ExtensionPoint::Reserve => want.reserve.clone(),
            ExtensionPoint::Permit => want.permit.clone(),
            ExtensionPoint::PreBind => want.pre_bind.clone(),
            ExtensionPoint::Bind => want.bind.clone(),
            ExtensionPoint::PostBind => want.post_bind.clone(),
        };
        assert_eq!(got, want_list, "default plugins at {ep}");
    }
    assert_eq!(p.plugins.score, want.score);
    assert!(p.preemption_enabled());
    assert_eq!(p.percentage_of_nodes_to_score, None);
    assert_eq!(p.args, PluginArgs::default());
}

#[test]
fn default_score_weights_are_upstreams() {
    let p = Profile::default_profile();
    let cases = [
        ("TaintToleration weighs 3", TaintToleration, Some(3)),
        ("NodeAffinity weighs 2", NodeAffinity, Some(2)),
        ("PodTopologySpread weighs 2", PodTopologySpread, Some(2)),
        ("InterPodAffinity weighs 2", InterPodAffinity, Some(2)),
        ("NodeResourcesFit weighs 1", NodeResourcesFit, Some(1)),
        ("BalancedAllocation weighs 1", NodeResourcesBalancedAllocation, Some(1)),
        ("ImageLocality weighs 1", ImageLocality, Some(1)),
        ("NodePorts does not score", NodePorts, None),
    ];
    for (name, plugin, want) in cases {
        assert_eq!(p.score_weight(plugin), want, "{name}");
    }
}

#[test]
fn merging_plugin_sets_follows_upstream_merge_plugins() {
    // Cases from upstream's TestMergePlugins (default_plugins_test.go), on one extension
    // point, with names from kplace's registry.
    struct Case {
        name: &'static str,
        default: PluginSet,
        custom: PluginSet,
        want: Vec<(PluginName, Option<i32>)>,
    }
    let default = set(&[(TaintToleration, Some(3)), (NodeAffinity, Some(2))], &[]);
    let cases = [
        Case {
            name: "a custom plugin is appended after the defaults",
            default: default.clone(),
            custom: set(&[(ImageLocality, Some(5))], &[]),
            want: vec![
                (TaintToleration, Some(3)),
                (NodeAffinity, Some(2)),
                (ImageLocality, Some(5)),
            ],
        },
        Case {
            name: "disabling a default removes only that default",
            default: default.clone(),
            custom: set(&[], &["TaintToleration"]),
            want: vec![(NodeAffinity, Some(2))],
        },
        Case {
            name: "disabling star removes every default but keeps custom entries",
            default: default.clone(),
            custom: set(&[(NodeAffinity, Some(7))], &["*"]),
            want: vec![(NodeAffinity, Some(7))],
        },
        Case {
            name: "re-enabling a default replaces it in place",
            default: default.clone(),
            custom: set(&[(ImageLocality, None), (TaintToleration, Some(10))], &[]),
            want: vec![(TaintToleration, Some(10)), (NodeAffinity, Some(2)), (ImageLocality, None)],
        },
        Case {
            name: "re-enabling a default without a weight drops the default weight",
            default: default.clone(),
            custom: set(&[(TaintToleration, None)], &[]),
            want: vec![(TaintToleration, None), (NodeAffinity, Some(2))],
        },
        Case {
            name: "disabled and re-enabled moves a default to the end",
            default: default.clone(),
            custom: set(&[(TaintToleration, Some(1))], &["TaintToleration"]),
            want: vec![(NodeAffinity, Some(2)), (TaintToleration, Some(1))],
        },
        Case {
            name: "a duplicated custom entry replaces with its last copy and appends the first",
            default: default.clone(),
            custom: set(&[(NodeAffinity, Some(4)), (NodeAffinity, Some(5))], &[]),
            want: vec![
                (TaintToleration, Some(3)),
                (NodeAffinity, Some(5)),
                (NodeAffinity, Some(4)),
            ],
        },
    ];
    for c in cases {
        let got = merge_plugin_set(&c.default, &c.custom);
        let got: Vec<(PluginName, Option<i32>)> =
            got.enabled.iter().map(|e| (e.name, e.weight)).collect();
        assert_eq!(got, c.want, "{}", c.name);
    }
}

#[test]
fn expansion_follows_upstream_precedence_rules() {
    struct Case {
        name: &'static str,
        custom: PluginsConfig,
        check: fn(&ExpandedPlugins) -> bool,
    }
    let cases = [
        Case {
            name: "disabling a score plugin at score keeps its pre-score and filter",
            custom: PluginsConfig { score: set(&[], &["TaintToleration"]), ..Default::default() },
            check: |e| {
                !e.score.iter().any(|(p, _)| *p == TaintToleration)
                    && e.pre_score.contains(&TaintToleration)
                    && e.filter.contains(&TaintToleration)
            },
        },
        Case {
            name: "disabling a plugin in multiPoint removes it everywhere",
            custom: PluginsConfig {
                multi_point: set(&[], &["InterPodAffinity"]),
                ..Default::default()
            },
            check: |e| {
                ExtensionPoint::ALL.iter().all(|ep| {
                    let l = match ep {
                        ExtensionPoint::Score => e.score.iter().map(|(p, _)| *p).collect(),
                        ExtensionPoint::PreFilter => e.pre_filter.clone(),
                        ExtensionPoint::Filter => e.filter.clone(),
                        ExtensionPoint::PreScore => e.pre_score.clone(),
                        _ => Vec::new(),
                    };
                    !l.contains(&InterPodAffinity)
                })
            },
        },
        Case {
            name: "a score-specific weight overrides the multiPoint weight and runs first",
            custom: PluginsConfig {
                score: set(&[(ImageLocality, Some(5))], &[]),
                ..Default::default()
            },
            check: |e| e.score.first() == Some(&(ImageLocality, 5)) && e.score.len() == 9,
        },
        Case {
            name: "a multiPoint weight applies when score does not name the plugin",
            custom: PluginsConfig {
                multi_point: set(&[(NodeResourcesFit, Some(7))], &[]),
                ..Default::default()
            },
            check: |e| e.score.contains(&(NodeResourcesFit, 7)),
        },
        Case {
            name: "a zero weight counts as one",
            custom: PluginsConfig {
                multi_point: set(&[(TaintToleration, Some(0))], &[]),
                ..Default::default()
            },
            check: |e| e.score.contains(&(TaintToleration, 1)),
        },
        Case {
            name: "star at filter skips expansion there and keeps only the listed filters",
            custom: PluginsConfig {
                filter: set(&[(NodeName, None), (NodeResourcesFit, None)], &["*"]),
                ..Default::default()
            },
            check: |e| {
                e.filter == vec![NodeName, NodeResourcesFit] && e.pre_filter.contains(&NodeAffinity)
            },
        },
        Case {
            name: "a filter re-enabled at filter runs before the multiPoint filters",
            custom: PluginsConfig {
                filter: set(&[(NodeResourcesFit, None)], &[]),
                ..Default::default()
            },
            check: |e| e.filter.first() == Some(&NodeResourcesFit) && e.filter.len() == 13,
        },
        Case {
            name: "star at multiPoint with a few plugins keeps only those",
            custom: PluginsConfig {
                multi_point: set(
                    &[(PrioritySort, None), (NodeResourcesFit, Some(4)), (DefaultBinder, None)],
                    &["*"],
                ),
                ..Default::default()
            },
            check: |e| {
                e.filter == vec![NodeResourcesFit]
                    && e.score == vec![(NodeResourcesFit, 4)]
                    && e.post_filter.is_empty()
                    && e.pre_enqueue.is_empty()
            },
        },
    ];
    for c in cases {
        match resolve(c.custom) {
            Ok(e) => assert!((c.check)(&e), "{}: got {e:?}", c.name),
            Err(errs) => panic!("{}: unexpected errors {errs:?}", c.name),
        }
    }
}

#[test]
fn invalid_plugin_arrangements_are_rejected() {
    let cases = [
        (
            "a plugin enabled at an extension point it does not implement",
            PluginsConfig { filter: set(&[(ImageLocality, None)], &[]), ..Default::default() },
            "filter.enabled[0]",
            "does not implement the filter extension point",
        ),
        (
            "a plugin enabled twice at one extension point",
            PluginsConfig {
                score: set(&[(ImageLocality, Some(1)), (ImageLocality, Some(2))], &[]),
                ..Default::default()
            },
            "score.enabled[1]",
            "enabled twice at score",
        ),
        (
            "a plugin enabled twice in multiPoint",
            PluginsConfig {
                multi_point: set(&[(NodePorts, None), (NodePorts, None)], &["*"]),
                queue_sort: set(&[(PrioritySort, None)], &[]),
                bind: set(&[(DefaultBinder, None)], &[]),
                ..Default::default()
            },
            "multiPoint.enabled[1]",
            "enabled twice in multiPoint",
        ),
        (
            "no queue sort plugin",
            PluginsConfig { queue_sort: set(&[], &["*"]), ..Default::default() },
            "queueSort",
            "exactly one queue sort plugin is required, got 0",
        ),
        (
            "no bind plugin",
            PluginsConfig { multi_point: set(&[], &["DefaultBinder"]), ..Default::default() },
            "bind",
            "at least one bind plugin is required",
        ),
    ];
    for (name, custom, field, message) in cases {
        let errs = resolve(custom).expect_err(name);
        assert!(
            errs.iter().any(|e| e.field == field && e.message.contains(message)),
            "{name}: got {errs:?}"
        );
    }
}

#[test]
fn plugin_names_parse_and_classify() {
    for p in PluginName::ALL {
        assert_eq!(PluginName::parse(p.as_str()), Ok(p), "{p} round-trips");
        assert!(!p.extension_points().is_empty(), "{p} implements something");
    }
    assert!(matches!(PluginName::parse("EBSLimits"), Err(PluginNameError::Removed { .. })));
    assert!(matches!(PluginName::parse("nodeaffinity"), Err(PluginNameError::Unknown { .. })));
    assert!(NodeResourcesFit.evaluated());
    assert!(!VolumeBinding.evaluated());
    let uneval: Vec<PluginName> =
        Profile::default_profile().unevaluated().iter().map(|(p, _)| *p).collect();
    assert_eq!(
        uneval,
        vec![
            SchedulingGates,
            DynamicResources,
            VolumeRestrictions,
            NodeVolumeLimits,
            VolumeBinding,
            VolumeZone
        ]
    );
}

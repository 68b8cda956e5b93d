use super::*;
use crate::framework::args::ScoringStrategyType::*;
use crate::model::{NodeSelector, NodeSelectorTerm, PreferredSchedulingTerm, Requirement};
use PluginName::*;

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/config").join(name)
}

fn load(name: &str) -> SchedulerConfig {
    match SchedulerConfig::from_file(sample(name)) {
        Ok(c) => c,
        Err(e) => panic!("{name} should load: {e}"),
    }
}

const HEADER: &str =
    "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";

fn parse(body: &str) -> Result<SchedulerConfig, ConfigError> {
    SchedulerConfig::parse(&format!("{HEADER}{body}"), "test.yaml")
}

fn field_errors(case: &str, result: Result<SchedulerConfig, ConfigError>) -> Vec<FieldError> {
    match result {
        Err(ConfigError::Invalid { errors, .. }) => errors,
        Err(other) => panic!("{case}: expected field errors, got {other}"),
        Ok(_) => panic!("{case}: expected field errors, got a configuration"),
    }
}

fn only_profile(c: &SchedulerConfig) -> &Profile {
    assert_eq!(c.profiles.len(), 1, "one profile");
    &c.profiles[0]
}

/// A check on a loaded configuration.
type Check = fn(&SchedulerConfig);

fn weights(p: &Profile) -> Vec<(PluginName, i64)> {
    p.plugins.score.clone()
}

#[test]
fn no_configuration_means_one_default_profile() {
    let c = SchedulerConfig::default();
    assert_eq!(c.profiles, vec![Profile::default_profile()]);
    assert_eq!(c.percentage_of_nodes_to_score, None);
}

#[test]
fn sample_configurations_load_as_kube_scheduler_reads_them() {
    let cases: Vec<(&str, Check)> = vec![
        ("minimal.yaml", |c| {
            assert_eq!(c.profiles, vec![Profile::default_profile()]);
            assert!(c.warnings.is_empty());
        }),
        ("bin-packing.yaml", |c| {
            let p = only_profile(c);
            assert_eq!(
                weights(p),
                vec![
                    (NodeResourcesFit, 5),
                    (TaintToleration, 3),
                    (NodeAffinity, 2),
                    (VolumeBinding, 1),
                    (PodTopologySpread, 2),
                    (InterPodAffinity, 2),
                    (DynamicResources, 1),
                    (ImageLocality, 1),
                ]
            );
            let fit = &p.args.node_resources_fit;
            assert_eq!(fit.scoring_strategy.kind, MostAllocated);
            assert_eq!(
                fit.scoring_strategy.resources,
                vec![
                    ResourceSpec::new("cpu", 1),
                    ResourceSpec::new("memory", 1),
                    ResourceSpec::new("nvidia.com/gpu", 5),
                ]
            );
            assert_eq!(fit.ignored_resource_groups, vec!["example.com".to_string()]);
            assert_eq!(p.percentage_of_nodes_to_score, Some(50));
            assert_eq!(c.percentage_of_nodes_to_score, Some(50));
        }),
        ("requested-to-capacity-ratio.yaml", |c| {
            let s = &only_profile(c).args.node_resources_fit.scoring_strategy;
            assert_eq!(s.kind, RequestedToCapacityRatio);
            assert_eq!(
                s.resources,
                vec![ResourceSpec::new("cpu", 3), ResourceSpec::new("memory", 1)]
            );
            let shape: Vec<(i32, i32)> = s.shape.iter().map(|p| (p.utilization, p.score)).collect();
            assert_eq!(shape, vec![(0, 0), (80, 10), (100, 6)]);
            assert_eq!(only_profile(c).scheduler_name, "default-scheduler");
        }),
        ("multiple-profiles.yaml", |c| {
            let names: Vec<&str> = c.profiles.iter().map(|p| p.scheduler_name.as_str()).collect();
            assert_eq!(names, vec!["default-scheduler", "no-scoring-scheduler", "batch-scheduler"]);
            assert_eq!(c.profiles[0], Profile::default_profile());

            let none = &c.profiles[1];
            assert!(none.plugins.score.is_empty() && none.plugins.pre_score.is_empty());
            assert_eq!(none.plugins.filter, c.profiles[0].plugins.filter);

            let batch = &c.profiles[2];
            assert_eq!(batch.score_weight(PodTopologySpread), Some(5));
            assert!(!batch.preemption_enabled());
            assert_eq!(batch.plugins.post_filter, vec![DynamicResources]);
            assert_eq!(batch.percentage_of_nodes_to_score, Some(100));
            let spread = &batch.args.pod_topology_spread;
            assert_eq!(spread.defaulting_type, SpreadDefaultingType::List);
            assert_eq!(
                spread.default_constraints,
                vec![
                    TopologySpreadConstraint {
                        max_skew: 2,
                        topology_key: "topology.kubernetes.io/zone".into(),
                        when_unsatisfiable: UnsatisfiableAction::ScheduleAnyway,
                        label_selector: None,
                        min_domains: None,
                        node_affinity_policy: InclusionPolicy::Honor,
                        node_taints_policy: InclusionPolicy::Ignore,
                        match_label_keys: vec![],
                    },
                    TopologySpreadConstraint {
                        max_skew: 1,
                        topology_key: "kubernetes.io/hostname".into(),
                        when_unsatisfiable: UnsatisfiableAction::DoNotSchedule,
                        label_selector: None,
                        min_domains: None,
                        node_affinity_policy: InclusionPolicy::Honor,
                        node_taints_policy: InclusionPolicy::Honor,
                        match_label_keys: vec![],
                    },
                ]
            );
            let added = batch.args.node_affinity.added_affinity.clone().unwrap_or_default();
            assert_eq!(
                added.required,
                Some(NodeSelector {
                    terms: vec![NodeSelectorTerm {
                        match_expressions: vec![Requirement::new(
                            "node.example.com/lifecycle",
                            MatchOp::NotIn,
                            &["spot"]
                        )],
                        ..Default::default()
                    }]
                })
            );
            assert_eq!(
                added.preferred,
                vec![PreferredSchedulingTerm {
                    weight: 10,
                    preference: NodeSelectorTerm {
                        match_expressions: vec![Requirement::new(
                            "node.example.com/cpu-generation",
                            MatchOp::Gt,
                            &["3"]
                        )],
                        ..Default::default()
                    },
                }]
            );
            assert_eq!(
                batch.args.inter_pod_affinity,
                InterPodAffinityArgs {
                    hard_pod_affinity_weight: 10,
                    ignore_preferred_terms_of_existing_pods: true
                }
            );
            assert_eq!(
                batch.args.default_preemption,
                DefaultPreemptionArgs {
                    min_candidate_nodes_percentage: 20,
                    min_candidate_nodes_absolute: 50
                }
            );
            // The other profiles keep default arguments.
            assert_eq!(c.profiles[1].args, PluginArgs::default());
        }),
        ("reordered-filters.yaml", |c| {
            let p = only_profile(c);
            assert_eq!(
                p.plugins.filter,
                vec![
                    NodeName,
                    NodeUnschedulable,
                    NodeResourcesFit,
                    TaintToleration,
                    NodeAffinity,
                    NodePorts,
                    PodTopologySpread,
                    InterPodAffinity,
                ]
            );
            assert_eq!(p.plugins.pre_filter, Profile::default_profile().plugins.pre_filter);
        }),
        ("spread-heavy.json", |c| {
            let p = only_profile(c);
            assert_eq!(p.score_weight(PodTopologySpread), Some(10));
            assert_eq!(p.score_weight(ImageLocality), Some(3));
            assert_eq!(p.plugins.score.first(), Some(&(PodTopologySpread, 10)));
            assert_eq!(
                p.args.balanced_allocation.resources,
                vec![
                    ResourceSpec::new("cpu", 1),
                    ResourceSpec::new("memory", 1),
                    ResourceSpec::new("ephemeral-storage", 1),
                ]
            );
        }),
    ];
    for (file, check) in cases {
        check(&load(file));
    }
}

#[test]
fn invalid_sample_configurations_are_rejected_naming_file_and_field() {
    let cases = [
        (
            "invalid-unknown-field.yaml",
            "profiles[0].pluginConfig[0].args.scoringStrategy.resource",
            "unknown field \"resource\"",
        ),
        (
            "invalid-unknown-plugin.yaml",
            "profiles[0].plugins.score.enabled[0].name",
            "unknown plugin \"SelectorSpread\"",
        ),
        (
            "invalid-shape.yaml",
            "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape[1].utilization",
            "sorted in increasing order",
        ),
        (
            "invalid-shape.yaml",
            "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape[1].score",
            "11 is not in the valid range [0, 10]",
        ),
        ("invalid-api-version.yaml", "apiVersion", "\"kubescheduler.config.k8s.io/v1beta3\""),
        ("invalid-extenders.yaml", "extenders", "not supported"),
    ];
    for (file, field, message) in cases {
        let err = match SchedulerConfig::from_file(sample(file)) {
            Err(e) => e,
            Ok(_) => panic!("{file} should be rejected"),
        };
        let text = err.to_string();
        assert!(text.contains(file), "{file}: the message names the file: {text}");
        assert!(
            text.contains(&format!("{field}: ")) && text.contains(message),
            "{file}: want {field}: …{message}…, got {text}"
        );
    }
}

#[test]
fn plugin_configurations_resolve_like_upstream() {
    let cases: Vec<(&str, &str, Check)> = vec![
        (
            "disabling a score plugin removes only its score",
            "profiles:\n- plugins:\n    score:\n      disabled:\n      - name: ImageLocality\n",
            |c| {
                let p = only_profile(c);
                assert_eq!(p.score_weight(ImageLocality), None);
                assert_eq!(p.plugins.score.len(), 8);
                assert_eq!(p.plugins.filter, Profile::default_profile().plugins.filter);
            },
        ),
        (
            "star disabled then enabled at score keeps only the listed plugins and weights",
            "profiles:\n- plugins:\n    score:\n      disabled:\n      - name: '*'\n      enabled:\n      - name: NodeResourcesFit\n        weight: 2\n      - name: ImageLocality\n",
            |c| {
                let p = only_profile(c);
                assert_eq!(weights(p), vec![(NodeResourcesFit, 2), (ImageLocality, 1)]);
                assert_eq!(p.plugins.pre_score, Profile::default_profile().plugins.pre_score);
            },
        ),
        (
            "a score-specific weight beats the multiPoint weight",
            "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n      - name: TaintToleration\n        weight: 7\n    score:\n      enabled:\n      - name: TaintToleration\n        weight: 9\n",
            |c| assert_eq!(only_profile(c).score_weight(TaintToleration), Some(9)),
        ),
        (
            "a multiPoint weight applies when score does not name the plugin",
            "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n      - name: TaintToleration\n        weight: 7\n",
            |c| assert_eq!(only_profile(c).score_weight(TaintToleration), Some(7)),
        ),
        (
            "re-enabling a default in multiPoint without a weight resets it to one",
            "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n      - name: NodeAffinity\n",
            |c| assert_eq!(only_profile(c).score_weight(NodeAffinity), Some(1)),
        ),
        (
            "disabling a plugin in multiPoint removes it from every extension point",
            "profiles:\n- plugins:\n    multiPoint:\n      disabled:\n      - name: PodTopologySpread\n",
            |c| {
                let p = only_profile(c);
                for ep in ExtensionPoint::ALL {
                    assert!(!p.runs(PodTopologySpread, ep), "not at {ep}");
                }
            },
        ),
        (
            "a profile's percentage overrides the global one, which applies otherwise",
            "percentageOfNodesToScore: 30\nprofiles:\n- schedulerName: a\n  percentageOfNodesToScore: 70\n- schedulerName: b\n",
            |c| {
                assert_eq!(c.profiles[0].percentage_of_nodes_to_score, Some(70));
                assert_eq!(c.profiles[1].percentage_of_nodes_to_score, Some(30));
            },
        ),
        (
            "absent args take every default",
            "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n  - name: PodTopologySpread\n    args: {}\n",
            |c| assert_eq!(only_profile(c).args, PluginArgs::default()),
        ),
        (
            "a scoring strategy without resources scores cpu and memory, and weight 0 means 1",
            "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        type: LeastAllocated\n  - name: NodeResourcesBalancedAllocation\n    args:\n      resources:\n      - name: cpu\n        weight: 0\n",
            |c| {
                let a = &only_profile(c).args;
                assert_eq!(a.node_resources_fit.scoring_strategy, ScoringStrategy::default());
                assert_eq!(a.balanced_allocation.resources, vec![ResourceSpec::new("cpu", 1)]);
            },
        ),
        (
            "a List defaulting type with no constraints means no default constraints",
            "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args:\n      defaultingType: List\n",
            |c| {
                let s = &only_profile(c).args.pod_topology_spread;
                assert_eq!(s.defaulting_type, SpreadDefaultingType::List);
                assert!(s.default_constraints.is_empty());
            },
        ),
        (
            "disabling a plugin kube-scheduler does not know only warns",
            "profiles:\n- plugins:\n    filter:\n      disabled:\n      - name: NoSuchPlugin\n",
            |c| {
                assert_eq!(
                    only_profile(c).plugins.filter,
                    Profile::default_profile().plugins.filter
                );
                assert_eq!(c.warnings.len(), 1);
                assert!(c.warnings[0].contains("profiles[0].plugins.filter.disabled[0].name"));
            },
        ),
        (
            "args for a plugin that takes none only warn",
            "profiles:\n- pluginConfig:\n  - name: ImageLocality\n    args:\n      foo: 1\n",
            |c| assert!(c.warnings.iter().any(|w| w.contains("takes no arguments"))),
        ),
        (
            "components settings that do not affect placement are accepted",
            "parallelism: 8\npodInitialBackoffSeconds: 2\npodMaxBackoffSeconds: 20\nenableProfiling: false\nenableContentionProfiling: false\ndelayCacheUntilActive: true\nleaderElection:\n  leaderElect: false\n  leaseDuration: 15s\n  renewDeadline: 10s\n  retryPeriod: 2s\n  resourceLock: leases\nclientConnection:\n  kubeconfig: /etc/kubernetes/scheduler.conf\n  contentType: application/vnd.kubernetes.protobuf\n  acceptContentTypes: application/json\nextenders: []\n",
            |c| assert_eq!(c.profiles, vec![Profile::default_profile()]),
        ),
    ];
    for (name, body, check) in cases {
        match parse(body) {
            Ok(c) => check(&c),
            Err(e) => panic!("{name}: {e}"),
        }
    }
}

#[test]
fn invalid_configurations_are_rejected_naming_the_field() {
    let cases = [
        (
            "an unknown top-level field",
            "profile:\n- schedulerName: x\n",
            "profile",
            "unknown field \"profile\"",
        ),
        (
            "a weight of the wrong type",
            "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: ImageLocality\n        weight: high\n",
            "profiles[0].plugins.score.enabled[0].weight",
            "invalid type",
        ),
        (
            "a plugin without a name",
            "profiles:\n- plugins:\n    score:\n      enabled:\n      - weight: 2\n",
            "profiles[0].plugins.score.enabled[0]",
            "missing field `name`",
        ),
        (
            "a plugin removed in v1.32",
            "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: EBSLimits\n",
            "profiles[0].plugins.filter.enabled[0].name",
            "removed in kube-scheduler v1.32",
        ),
        (
            "a plugin enabled where it has no such extension point",
            "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: ImageLocality\n",
            "profiles[0].plugins.filter.enabled[0]",
            "does not implement the filter extension point",
        ),
        (
            "no bind plugin left",
            "profiles:\n- plugins:\n    bind:\n      disabled:\n      - name: '*'\n",
            "profiles[0].plugins.bind",
            "at least one bind plugin",
        ),
        (
            "two profiles of the same name",
            "profiles:\n- schedulerName: a\n- schedulerName: a\n",
            "profiles[1].schedulerName",
            "duplicate scheduler name \"a\"",
        ),
        (
            "an unnamed profile among several",
            "profiles:\n- schedulerName: a\n- {}\n",
            "profiles[1].schedulerName",
            "required",
        ),
        (
            "queueSort configured differently across profiles",
            "profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n    queueSort:\n      disabled:\n      - name: '*'\n      enabled:\n      - name: PrioritySort\n",
            "profiles[1].plugins.queueSort",
            "must be the same for all profiles",
        ),
        (
            "a global percentageOfNodesToScore above 100",
            "percentageOfNodesToScore: 101\n",
            "percentageOfNodesToScore",
            "101 is not in the valid range [0, 100]",
        ),
        (
            "a profile percentageOfNodesToScore below 0",
            "profiles:\n- percentageOfNodesToScore: -1\n",
            "profiles[0].percentageOfNodesToScore",
            "-1 is not in the valid range",
        ),
        ("a non-positive parallelism", "parallelism: 0\n", "parallelism", "greater than zero"),
        (
            "a leader election lock other than leases",
            "leaderElection:\n  resourceLock: endpoints\n",
            "leaderElection.resourceLock",
            "must be \"leases\"",
        ),
        (
            "a max backoff below the initial backoff",
            "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 2\n",
            "podMaxBackoffSeconds",
            "greater than or equal to podInitialBackoffSeconds",
        ),
        (
            "two configs for one plugin",
            "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n  - name: NodeAffinity\n",
            "profiles[0].pluginConfig[1]",
            "duplicate config for plugin \"NodeAffinity\"",
        ),
        (
            "args of the wrong kind",
            "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      kind: InterPodAffinityArgs\n",
            "profiles[0].pluginConfig[0].args.kind",
            "must be of kind \"NodeResourcesFitArgs\"",
        ),
        (
            "args of another API version",
            "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      apiVersion: kubescheduler.config.k8s.io/v1beta3\n",
            "profiles[0].pluginConfig[0].args.apiVersion",
            "expected \"kubescheduler.config.k8s.io/v1\"",
        ),
        (
            "a hardPodAffinityWeight above 100",
            "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args:\n      hardPodAffinityWeight: 101\n",
            "profiles[0].pluginConfig[0].args.hardPodAffinityWeight",
            "101 is not in the valid range [0, 100]",
        ),
        (
            "an unsupported scoring strategy type",
            "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        type: Balanced\n",
            "profiles[0].pluginConfig[0].args.scoringStrategy.type",
            "unsupported value \"Balanced\"",
        ),
        (
            "a scoring strategy without a type",
            "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        resources:\n        - name: cpu\n",
            "profiles[0].pluginConfig[0].args.scoringStrategy.type",
            "unsupported value \"\"",
        ),
        (
            "a resource weight above 100",
            "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        type: MostAllocated\n        resources:\n        - name: cpu\n          weight: 101\n",
            "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight",
            "not in valid range (0, 100]",
        ),
        (
            "a shape given for MostAllocated",
            "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        type: MostAllocated\n        requestedToCapacityRatio:\n          shape:\n          - utilization: 0\n            score: 0\n",
            "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio",
            "forbidden",
        ),
        (
            "RequestedToCapacityRatio without a shape",
            "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        type: RequestedToCapacityRatio\n        requestedToCapacityRatio: {}\n",
            "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape",
            "at least one point",
        ),
        (
            "an ignored resource group with a slash",
            "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      ignoredResourceGroups: [example.com/foo]\n",
            "profiles[0].pluginConfig[0].args.ignoredResourceGroups[0]",
            "can't contain '/'",
        ),
        (
            "a balanced allocation weight other than 1",
            "profiles:\n- pluginConfig:\n  - name: NodeResourcesBalancedAllocation\n    args:\n      resources:\n      - name: cpu\n        weight: 2\n",
            "profiles[0].pluginConfig[0].args.resources[0].weight",
            "must be 1",
        ),
        (
            "a default constraint with a label selector",
            "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args:\n      defaultingType: List\n      defaultConstraints:\n      - maxSkew: 1\n        topologyKey: zone\n        whenUnsatisfiable: DoNotSchedule\n        labelSelector:\n          matchLabels: {app: web}\n",
            "profiles[0].pluginConfig[0].args.defaultConstraints[0].labelSelector",
            "must not define a selector",
        ),
        (
            "a default constraint with maxSkew 0",
            "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args:\n      defaultingType: List\n      defaultConstraints:\n      - maxSkew: 0\n        topologyKey: zone\n        whenUnsatisfiable: DoNotSchedule\n",
            "profiles[0].pluginConfig[0].args.defaultConstraints[0].maxSkew",
            "not in the valid range (0, inf)",
        ),
        (
            "default constraints with the System defaulting type",
            "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args:\n      defaultConstraints:\n      - maxSkew: 1\n        topologyKey: zone\n        whenUnsatisfiable: DoNotSchedule\n",
            "profiles[0].pluginConfig[0].args.defaultingType",
            "\"System\" is invalid when defaultConstraints are not empty",
        ),
        (
            "two default constraints on the same key and action",
            "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args:\n      defaultingType: List\n      defaultConstraints:\n      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n      - {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n",
            "profiles[0].pluginConfig[0].args.defaultConstraints[1]",
            "duplicate value {zone, DoNotSchedule}",
        ),
        (
            "an unknown field inside a default constraint",
            "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args:\n      defaultingType: List\n      defaultConstraints:\n      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, maxSkews: 2}\n",
            "profiles[0].pluginConfig[0].args.defaultConstraints[0].maxSkews",
            "unknown field",
        ),
        (
            "an unknown field inside addedAffinity",
            "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity:\n        requiredDuringSchedulingIgnoredDuringExecution:\n          nodeSelectorTerms:\n          - matchExpression:\n            - {key: a, operator: Exists}\n",
            "profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpression",
            "unknown field",
        ),
        (
            "an unsupported node selector operator in addedAffinity",
            "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity:\n        requiredDuringSchedulingIgnoredDuringExecution:\n          nodeSelectorTerms:\n          - matchExpressions:\n            - {key: a, operator: Equals, values: [b]}\n",
            "profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator",
            "unsupported value \"Equals\"",
        ),
        (
            "a Gt requirement with a non-integer value",
            "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity:\n        preferredDuringSchedulingIgnoredDuringExecution:\n        - weight: 1\n          preference:\n            matchExpressions:\n            - {key: cores, operator: Gt, values: [many]}\n",
            "profiles[0].pluginConfig[0].args.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].values[0]",
            "must be an integer",
        ),
        (
            "an In requirement without values",
            "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity:\n        requiredDuringSchedulingIgnoredDuringExecution:\n          nodeSelectorTerms:\n          - matchExpressions:\n            - {key: a, operator: In}\n",
            "profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values",
            "can't be empty",
        ),
        (
            "an invalid label key in addedAffinity",
            "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity:\n        requiredDuringSchedulingIgnoredDuringExecution:\n          nodeSelectorTerms:\n          - matchExpressions:\n            - {key: 'Bad_Prefix/zone', operator: Exists}\n",
            "profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key",
            "prefix part",
        ),
        (
            "both preemption minimums zero",
            "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args:\n      minCandidateNodesPercentage: 0\n      minCandidateNodesAbsolute: 0\n",
            "profiles[0].pluginConfig[0].args.minCandidateNodesAbsolute",
            "cannot be zero at the same time",
        ),
        (
            "config for a plugin removed in v1.32",
            "profiles:\n- pluginConfig:\n  - name: GCEPDLimits\n",
            "profiles[0].pluginConfig[0].name",
            "removed in kube-scheduler v1.32",
        ),
    ];
    for (name, body, field, message) in cases {
        let errors = field_errors(name, parse(body));
        assert!(
            errors.iter().any(|e| e.field == field && e.message.contains(message)),
            "{name}: want {field}: …{message}…, got {errors:?}"
        );
    }
}

#[test]
fn documents_that_are_not_configurations_are_rejected() {
    let cases = [
        (
            "a wrong kind",
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeletConfiguration\n",
            "kind",
        ),
        ("a missing apiVersion", "kind: KubeSchedulerConfiguration\n", "apiVersion"),
        ("a list instead of an object", "- a\n- b\n", ""),
        ("a core API version", "apiVersion: v1\nkind: KubeSchedulerConfiguration\n", "apiVersion"),
    ];
    for (name, text, field) in cases {
        let errors = field_errors(name, SchedulerConfig::parse(text, "doc.yaml"));
        assert!(errors.iter().any(|e| e.field == field), "{name}: got {errors:?}");
    }
    assert!(
        matches!(
            SchedulerConfig::parse(
                &format!("{HEADER}kind: KubeSchedulerConfiguration\n"),
                "dup.yaml"
            ),
            Err(ConfigError::Syntax { .. })
        ),
        "a duplicated key is refused, as upstream's strict decoding refuses it"
    );
    let tabbed = "{\n\t\"apiVersion\": \"kubescheduler.config.k8s.io/v1\",\n\t\"kind\": \"KubeSchedulerConfiguration\"\n}\n";
    assert!(SchedulerConfig::parse(tabbed, "tabbed.json").is_ok(), "tab-indented JSON is read");
    assert!(
        matches!(
            SchedulerConfig::parse("profiles: [", "broken.yaml"),
            Err(ConfigError::Syntax { .. })
        ),
        "broken YAML is a syntax error"
    );
    assert!(
        matches!(
            SchedulerConfig::parse("{\"apiVersion\": ", "broken.json"),
            Err(ConfigError::Syntax { .. })
        ),
        "broken JSON is a syntax error"
    );
}

#[test]
fn a_missing_file_is_an_io_error_naming_the_path() {
    let err = SchedulerConfig::from_file(sample("no-such-file.yaml")).expect_err("missing file");
    assert!(matches!(err, ConfigError::Io { .. }));
    assert!(err.to_string().contains("no-such-file.yaml"), "{err}");
}

#[test]
fn pods_for_kplace_use_the_default_profile_unless_kplace_is_configured() {
    let cases: [(&str, &str, &str, Option<&str>); 4] = [
        ("kplace falls back to default-scheduler", "", "kplace", Some("default-scheduler")),
        (
            "a kplace profile is used when configured",
            "profiles:\n- schedulerName: default-scheduler\n- schedulerName: kplace\n",
            "kplace",
            Some("kplace"),
        ),
        (
            "kplace has no profile when default-scheduler is not configured",
            "profiles:\n- schedulerName: batch\n",
            "kplace",
            None,
        ),
        ("other names never fall back", "", "my-scheduler", None),
    ];
    for (name, body, scheduler, want) in cases {
        let c = match parse(body) {
            Ok(c) => c,
            Err(e) => panic!("{name}: {e}"),
        };
        let got = c.profile_for(scheduler).map(|p| p.scheduler_name.as_str());
        assert_eq!(got, want, "{name}");
    }
    let c = SchedulerConfig::default();
    assert_eq!(c.served_scheduler_names(), vec!["default-scheduler", "kplace"]);
}

use super::*;

const GI: i64 = 1024 * 1024 * 1024;
const MI: i64 = 1024 * 1024;

fn list(pairs: &[(&str, &str)]) -> BTreeMap<String, ApiQuantity> {
    pairs.iter().map(|(k, v)| ((*k).to_string(), ApiQuantity((*v).to_string()))).collect()
}

fn container(name: &str, requests: &[(&str, &str)]) -> k8s::Container {
    k8s::Container {
        name: name.to_string(),
        resources: Some(k8s::ResourceRequirements {
            requests: if requests.is_empty() { None } else { Some(list(requests)) },
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn with_limits(mut c: k8s::Container, limits: &[(&str, &str)]) -> k8s::Container {
    c.resources.get_or_insert_with(Default::default).limits = Some(list(limits));
    c
}

fn sidecar(name: &str, requests: &[(&str, &str)]) -> k8s::Container {
    k8s::Container { restart_policy: Some("Always".to_string()), ..container(name, requests) }
}

fn spec(containers: Vec<k8s::Container>, init: Vec<k8s::Container>) -> k8s::PodSpec {
    k8s::PodSpec {
        containers,
        init_containers: if init.is_empty() { None } else { Some(init) },
        ..Default::default()
    }
}

fn res(milli_cpu: i64, memory: i64) -> Resource {
    Resource { milli_cpu, memory, ..Default::default() }
}

struct Case {
    name: &'static str,
    spec: k8s::PodSpec,
    status: Option<k8s::PodStatus>,
    requests: Resource,
    non_zero: (i64, i64),
}

fn status_with(statuses: Vec<k8s::ContainerStatus>, infeasible: bool) -> k8s::PodStatus {
    k8s::PodStatus {
        container_statuses: Some(statuses),
        conditions: infeasible.then(|| {
            vec![k8s::PodCondition {
                type_: "PodResizePending".to_string(),
                status: "True".to_string(),
                reason: Some("Infeasible".to_string()),
                ..Default::default()
            }]
        }),
        ..Default::default()
    }
}

fn container_status(
    name: &str,
    allocated: Option<&[(&str, &str)]>,
    actuated: Option<&[(&str, &str)]>,
) -> k8s::ContainerStatus {
    k8s::ContainerStatus {
        name: name.to_string(),
        allocated_resources: allocated.map(list),
        resources: actuated
            .map(|a| k8s::ResourceRequirements { requests: Some(list(a)), ..Default::default() }),
        ..Default::default()
    }
}

#[test]
fn pod_requests_follow_upstream_helpers() {
    let default_mem = DEFAULT_MEMORY_REQUEST;
    let cases = vec![
        Case {
            name: "a pod with only limits requests its limits (API defaulting)",
            spec: spec(vec![with_limits(container("c", &[]), &[("cpu", "9")])], vec![]),
            status: None,
            requests: res(9000, 0),
            non_zero: (9000, default_mem),
        },
        Case {
            name: "overhead alone is the whole request",
            spec: k8s::PodSpec {
                overhead: Some(list(&[("cpu", "5"), ("memory", "5")])),
                ..spec(vec![container("c", &[])], vec![])
            },
            status: None,
            requests: res(5000, 5),
            non_zero: (5100, default_mem + 5),
        },
        Case {
            name: "requests and overhead add up",
            spec: k8s::PodSpec {
                overhead: Some(list(&[("cpu", "5"), ("memory", "5")])),
                ..spec(vec![container("c", &[("cpu", "1"), ("memory", "10")])], vec![])
            },
            status: None,
            requests: res(6000, 15),
            non_zero: (6000, 15),
        },
        Case {
            name: "two containers are summed",
            spec: spec(
                vec![
                    container("a", &[("cpu", "1"), ("memory", "5")]),
                    container("b", &[("cpu", "4"), ("memory", "12")]),
                ],
                vec![],
            ),
            status: None,
            requests: res(5000, 17),
            non_zero: (5000, 17),
        },
        Case {
            name: "a massive init container dominates the app containers",
            spec: spec(
                vec![
                    container("a", &[("cpu", "1"), ("memory", "5")]),
                    container("b", &[("cpu", "4"), ("memory", "12")]),
                ],
                vec![
                    container("small", &[("cpu", "1"), ("memory", "5")]),
                    container("big", &[("cpu", "40"), ("memory", "120")]),
                ],
            ),
            status: None,
            requests: res(40000, 120),
            non_zero: (40000, 120),
        },
        Case {
            name: "a larger init container wins for cpu only",
            spec: spec(
                vec![container("c", &[("cpu", "1")])],
                vec![container("i", &[("cpu", "4")])],
            ),
            status: None,
            requests: res(4000, 0),
            non_zero: (4000, default_mem),
        },
        Case {
            name: "sidecars add to the app containers",
            spec: spec(
                vec![container("app", &[("cpu", "1")])],
                vec![sidecar("side", &[("cpu", "2")])],
            ),
            status: None,
            requests: res(3000, 0),
            non_zero: (3000, 2 * default_mem),
        },
        Case {
            name: "a regular init container runs beside the sidecars declared before it",
            spec: spec(
                vec![container("app", &[("cpu", "1")])],
                vec![sidecar("side", &[("cpu", "1")]), container("init", &[("cpu", "3")])],
            ),
            status: None,
            requests: res(4000, 0),
            non_zero: (4000, 2 * default_mem),
        },
        Case {
            name: "a regular init container does not run beside sidecars declared after it",
            spec: spec(
                vec![container("app", &[("cpu", "1")])],
                vec![container("init", &[("cpu", "3")]), sidecar("side", &[("cpu", "1")])],
            ),
            status: None,
            requests: res(3000, 0),
            non_zero: (3000, 2 * default_mem),
        },
        Case {
            name: "fractional requests are summed exactly before rounding",
            spec: spec(
                vec![container("a", &[("memory", "0.5")]), container("b", &[("memory", "0.5")])],
                vec![],
            ),
            status: None,
            requests: res(0, 1),
            non_zero: (200, 1),
        },
        Case {
            name: "memory with a fraction of a byte rounds up",
            spec: spec(vec![container("a", &[("memory", "1.5"), ("cpu", "0.1m")])], vec![]),
            status: None,
            requests: res(1, 2),
            non_zero: (1, 2),
        },
        Case {
            name: "an explicit zero request stays zero for scoring",
            spec: spec(vec![container("a", &[("cpu", "0"), ("memory", "0")])], vec![]),
            status: None,
            requests: res(0, 0),
            non_zero: (0, 0),
        },
        Case {
            name: "a pod with no requests scores as 100m and 200Mi per container",
            spec: spec(vec![container("a", &[]), container("b", &[])], vec![]),
            status: None,
            requests: res(0, 0),
            non_zero: (200, 2 * default_mem),
        },
        Case {
            name: "pod-level requests replace the aggregated container requests",
            spec: k8s::PodSpec {
                resources: Some(k8s::ResourceRequirements {
                    requests: Some(list(&[("cpu", "2"), ("memory", "1Gi")])),
                    ..Default::default()
                }),
                ..spec(vec![container("a", &[("cpu", "1"), ("memory", "100Mi")])], vec![])
            },
            status: None,
            requests: res(2000, GI),
            non_zero: (2000, GI),
        },
        Case {
            name: "pod-level cpu request with no memory anywhere scores memory at 200Mi",
            spec: k8s::PodSpec {
                resources: Some(k8s::ResourceRequirements {
                    requests: Some(list(&[("cpu", "2")])),
                    ..Default::default()
                }),
                ..spec(vec![container("a", &[])], vec![])
            },
            status: None,
            requests: res(2000, 0),
            non_zero: (2000, default_mem),
        },
        Case {
            name: "pod-level limits alone default pod-level requests to the limits",
            spec: k8s::PodSpec {
                resources: Some(k8s::ResourceRequirements {
                    limits: Some(list(&[("cpu", "3"), ("memory", "2Gi")])),
                    ..Default::default()
                }),
                ..spec(vec![container("a", &[])], vec![])
            },
            status: None,
            requests: res(3000, 2 * GI),
            non_zero: (3000, 2 * GI),
        },
        Case {
            name: "pod-level limits default requests from the containers that request",
            spec: k8s::PodSpec {
                resources: Some(k8s::ResourceRequirements {
                    limits: Some(list(&[("cpu", "3"), ("memory", "2Gi")])),
                    ..Default::default()
                }),
                ..spec(vec![container("a", &[("cpu", "500m")])], vec![])
            },
            status: None,
            requests: res(500, 2 * GI),
            non_zero: (500, 2 * GI),
        },
        Case {
            name: "extended and hugepages resources are scalar resources",
            spec: spec(
                vec![container(
                    "a",
                    &[
                        ("nvidia.com/gpu", "2"),
                        ("hugepages-2Mi", "4Mi"),
                        ("ephemeral-storage", "1Gi"),
                    ],
                )],
                vec![],
            ),
            status: None,
            requests: Resource {
                ephemeral_storage: GI,
                scalar: [("hugepages-2Mi".to_string(), 4 * MI), ("nvidia.com/gpu".to_string(), 2)]
                    .into_iter()
                    .collect(),
                ..Default::default()
            },
            non_zero: (100, default_mem),
        },
        Case {
            name: "a resized container is accounted at the larger of spec and status",
            spec: spec(vec![container("c", &[("cpu", "4")])], vec![]),
            status: Some(status_with(
                vec![container_status("c", None, Some(&[("cpu", "2")]))],
                false,
            )),
            requests: res(4000, 0),
            non_zero: (4000, default_mem),
        },
        Case {
            name: "an infeasible resize ignores the spec",
            spec: spec(vec![container("c", &[("cpu", "4")])], vec![]),
            status: Some(status_with(
                vec![container_status("c", None, Some(&[("cpu", "2")]))],
                true,
            )),
            requests: res(2000, 0),
            non_zero: (2000, default_mem),
        },
        Case {
            name: "an infeasible resize in progress takes the larger of allocated and actuated",
            spec: spec(vec![container("c", &[("cpu", "6")])], vec![]),
            status: Some(status_with(
                vec![container_status("c", Some(&[("cpu", "4")]), Some(&[("cpu", "2")]))],
                true,
            )),
            requests: res(4000, 0),
            non_zero: (4000, default_mem),
        },
        Case {
            name: "a per-resource three-way maximum of spec, actuated and allocated",
            spec: spec(vec![container("c", &[("cpu", "10m"), ("memory", "20M")])], vec![]),
            status: Some(status_with(
                vec![container_status(
                    "c",
                    Some(&[("cpu", "30m"), ("memory", "10M")]),
                    Some(&[("cpu", "20m"), ("memory", "30M")]),
                )],
                false,
            )),
            requests: res(30, 30_000_000),
            non_zero: (30, 30_000_000),
        },
    ];
    for case in cases {
        let got = pod_resources(&case.spec, case.status.as_ref())
            .unwrap_or_else(|e| panic!("{}: {e}", case.name));
        assert_eq!(got.requests, case.requests, "{}", case.name);
        assert_eq!(
            (got.non_zero.milli_cpu, got.non_zero.memory),
            case.non_zero,
            "{} (non-zero)",
            case.name
        );
    }
}

#[test]
fn bad_quantities_are_errors_naming_the_field() {
    let cases: &[(&str, k8s::PodSpec, &str)] = &[
        (
            "a negative request is rejected",
            spec(vec![container("a", &[("cpu", "-1")])], vec![]),
            "spec.containers[0].resources.requests.cpu: negative quantity \"-1\"",
        ),
        (
            "an unparsable request is rejected",
            spec(vec![container("a", &[]), container("b", &[("memory", "1.5.3Gi")])], vec![]),
            "spec.containers[1].resources.requests.memory: invalid quantity \"1.5.3Gi\"",
        ),
        (
            "a negative init container limit is rejected",
            spec(vec![], vec![with_limits(container("i", &[]), &[("memory", "-1Gi")])]),
            "spec.initContainers[0].resources.limits.memory: negative quantity",
        ),
        (
            "a cpu request too large for millicores overflows",
            spec(vec![container("a", &[("cpu", "1e17")])], vec![]),
            "pod requests.cpu: the total does not fit",
        ),
    ];
    for (name, spec, want) in cases {
        let err = pod_resources(spec, None).unwrap_err().to_string();
        assert!(err.contains(want), "{name}: {err}");
    }
}

#[test]
fn node_allocatable_falls_back_to_capacity_only_when_absent() {
    let status = |alloc: Option<&[(&str, &str)]>, cap: Option<&[(&str, &str)]>| k8s::NodeStatus {
        allocatable: alloc.map(list),
        capacity: cap.map(list),
        ..Default::default()
    };
    let cases: &[(&str, k8s::NodeStatus, Resource)] = &[
        (
            "allocatable is used when present",
            status(Some(&[("cpu", "7910m"), ("pods", "110")]), Some(&[("cpu", "8")])),
            Resource { milli_cpu: 7910, allowed_pod_number: 110, ..Default::default() },
        ),
        (
            "capacity is used when allocatable is absent",
            status(None, Some(&[("cpu", "8"), ("memory", "1Gi")])),
            Resource { milli_cpu: 8000, memory: GI, ..Default::default() },
        ),
        (
            "a resource missing from a present allocatable is zero",
            status(Some(&[("cpu", "2")]), Some(&[("cpu", "2"), ("memory", "1Gi")])),
            res(2000, 0),
        ),
        (
            "unknown unqualified resource names are ignored",
            status(Some(&[("cpu", "1"), ("storage", "5"), ("example.com/foo", "3")]), None),
            Resource {
                milli_cpu: 1000,
                scalar: [("example.com/foo".to_string(), 3)].into_iter().collect(),
                ..Default::default()
            },
        ),
    ];
    for (name, status, want) in cases {
        assert_eq!(&node_allocatable(Some(status)).unwrap(), want, "{name}");
    }
    let negative = status(Some(&[("memory", "-1")]), None);
    assert!(node_allocatable(Some(&negative)).is_err(), "negative allocatable is rejected");
}

#[test]
fn scalar_resource_names_follow_upstream() {
    let cases: &[(&str, bool)] = &[
        ("nvidia.com/gpu", true),
        ("example.com/dongle", true),
        ("hugepages-2Mi", true),
        ("hugepages-1Gi", true),
        ("kubernetes.io/something", true),
        ("foo.kubernetes.io/bar", true),
        ("attachable-volumes-aws-ebs", true),
        ("cpu", false),
        ("memory", false),
        ("storage", false),
        ("requests.example.com/foo", false),
        ("example.com/", false),
        ("/foo", false),
        ("Example.com/foo", false),
        ("example.com/foo/bar", false),
        ("example.com/-foo", false),
        ("example.com/a_b.c-d", true),
    ];
    for (name, want) in cases {
        assert_eq!(is_scalar_resource_name(name), *want, "{name}");
    }
}

#[test]
fn qualified_names_follow_upstream_validation() {
    let cases: &[(&str, bool)] = &[
        ("app", true),
        ("kubernetes.io/hostname", true),
        ("a/b", true),
        ("", false),
        ("/a", false),
        ("a/", false),
        ("a/b/c", false),
        ("-a", false),
        ("a-", false),
        ("UPPER/a", false),
        ("a b", false),
        (&"x".repeat(63), true),
        (&"x".repeat(64), false),
    ];
    for (name, want) in cases {
        assert_eq!(is_qualified_name(name), *want, "{name:?}");
    }
}

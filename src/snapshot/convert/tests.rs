use super::*;

fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs.iter().map(|(k, v)| ((*k).to_string(), (*v).to_string())).collect()
}

fn expr(key: &str, op: &str, values: &[&str]) -> metav1::LabelSelectorRequirement {
    metav1::LabelSelectorRequirement {
        key: key.to_string(),
        operator: op.to_string(),
        values: if values.is_empty() {
            None
        } else {
            Some(values.iter().map(|v| (*v).to_string()).collect())
        },
    }
}

fn node_expr(key: &str, op: &str, values: &[&str]) -> k8s::NodeSelectorRequirement {
    k8s::NodeSelectorRequirement {
        key: key.to_string(),
        operator: op.to_string(),
        values: Some(values.iter().map(|v| (*v).to_string()).collect()),
    }
}

#[test]
fn label_selectors_validate_like_upstream() {
    let sel = |exprs: Vec<metav1::LabelSelectorRequirement>| metav1::LabelSelector {
        match_expressions: Some(exprs),
        match_labels: None,
    };
    let cases: Vec<(&str, metav1::LabelSelector, Result<(), &str>)> = vec![
        ("In with values is valid", sel(vec![expr("app", "In", &["a", "b"])]), Ok(())),
        ("Exists without values is valid", sel(vec![expr("app", "Exists", &[])]), Ok(())),
        (
            "an unknown operator is rejected",
            sel(vec![expr("app", "Equals", &["a"])]),
            Err("matchExpressions[0].operator: \"Equals\" is not a valid label selector operator"),
        ),
        (
            "In without values is rejected",
            sel(vec![expr("app", "In", &[])]),
            Err("matchExpressions[0].values: for 'in', 'notin' operators"),
        ),
        (
            "Exists with values is rejected",
            sel(vec![expr("app", "Exists", &["x"])]),
            Err("matchExpressions[0].values: values set must be empty"),
        ),
        (
            "Gt is not a label selector operator",
            sel(vec![expr("n", "Gt", &["1"])]),
            Err("not a valid label selector operator"),
        ),
        (
            "an invalid key is rejected",
            sel(vec![expr("bad key", "Exists", &[])]),
            Err("matchExpressions[0].key: invalid label key"),
        ),
        (
            "an invalid value is rejected",
            sel(vec![expr("app", "In", &["-x"])]),
            Err("matchExpressions[0].values[0]: invalid label value"),
        ),
    ];
    for (name, s, want) in cases {
        let got = label_selector(&s);
        match (got, want) {
            (Ok(_), Ok(())) => {}
            (Err(e), Err(msg)) => assert!(e.to_string().contains(msg), "{name}: {e}"),
            (got, want) => panic!("{name}: got {got:?}, want {want:?}"),
        }
    }
    let ml = metav1::LabelSelector {
        match_labels: Some([("app".to_string(), "web".to_string())].into_iter().collect()),
        match_expressions: None,
    };
    assert_eq!(label_selector(&ml).unwrap(), LabelSelector::from_match_labels([("app", "web")]));
}

#[test]
fn node_selector_terms_with_parse_errors_never_match() {
    let term = |exprs: Vec<k8s::NodeSelectorRequirement>,
                fields: Vec<k8s::NodeSelectorRequirement>| {
        k8s::NodeSelectorTerm {
            match_expressions: Some(exprs),
            match_fields: if fields.is_empty() { None } else { Some(fields) },
        }
    };
    let node_labels = labels(&[("zone", "a"), ("cores", "8")]);
    let cases: Vec<(&str, k8s::NodeSelectorTerm, bool, bool)> = vec![
        // (name, term, invalid, matches node "n1" with node_labels)
        (
            "a valid In term matches",
            term(vec![node_expr("zone", "In", &["a"])], vec![]),
            false,
            true,
        ),
        ("Gt compares integers", term(vec![node_expr("cores", "Gt", &["4"])], vec![]), false, true),
        (
            "Gt with a non-integer is invalid",
            term(vec![node_expr("cores", "Gt", &["x"])], vec![]),
            true,
            false,
        ),
        (
            "an unknown operator is invalid",
            term(vec![node_expr("zone", "Equals", &["a"])], vec![]),
            true,
            false,
        ),
        (
            "matchFields on metadata.name selects by name",
            term(vec![], vec![node_expr("metadata.name", "In", &["n1"])]),
            false,
            true,
        ),
        (
            "matchFields with two values is invalid",
            term(vec![], vec![node_expr("metadata.name", "In", &["n1", "n2"])]),
            true,
            false,
        ),
        (
            "matchFields NotIn on an unknown field always holds",
            term(vec![], vec![node_expr("spec.foo", "NotIn", &["x"])]),
            false,
            true,
        ),
        (
            "matchFields In on an unknown field never holds",
            term(vec![], vec![node_expr("spec.foo", "In", &["x"])]),
            true,
            false,
        ),
    ];
    for (name, t, invalid, matches) in cases {
        let got = node_selector_term(&t);
        assert_eq!(got.invalid, invalid, "{name} (invalid)");
        assert_eq!(got.matches("n1", &node_labels), matches, "{name} (matches)");
    }
}

#[test]
fn match_label_keys_merge_into_affinity_selectors() {
    let pod_labels = labels(&[("app", "web"), ("pod-template-hash", "abc")]);
    let term = k8s::PodAffinityTerm {
        label_selector: Some(metav1::LabelSelector {
            match_labels: Some([("app".to_string(), "web".to_string())].into_iter().collect()),
            match_expressions: None,
        }),
        match_label_keys: Some(vec!["pod-template-hash".to_string(), "absent".to_string()]),
        mismatch_label_keys: Some(vec!["app".to_string()]),
        topology_key: "kubernetes.io/hostname".to_string(),
        ..Default::default()
    };
    let got = pod_affinity_term(&term, &pod_labels).unwrap();
    let mut want = LabelSelector {
        requirements: vec![
            Requirement::new("app", MatchOp::In, &["web"]),
            Requirement::new("app", MatchOp::NotIn, &["web"]),
            Requirement::new("pod-template-hash", MatchOp::In, &["abc"]),
        ],
    };
    want.normalize();
    assert_eq!(got.label_selector, Some(want), "keys present on the pod are merged");

    let nil = k8s::PodAffinityTerm { label_selector: None, ..term };
    assert_eq!(
        pod_affinity_term(&nil, &pod_labels).unwrap().label_selector,
        None,
        "a nil selector stays nil"
    );
}

#[test]
fn match_label_keys_merge_into_spread_selectors_and_defaults_apply() {
    let pod_labels = labels(&[("app", "web"), ("pod-template-hash", "abc")]);
    let c = k8s::TopologySpreadConstraint {
        label_selector: Some(metav1::LabelSelector {
            match_labels: Some([("app".to_string(), "web".to_string())].into_iter().collect()),
            match_expressions: None,
        }),
        match_label_keys: Some(vec!["pod-template-hash".to_string(), "missing".to_string()]),
        max_skew: 1,
        topology_key: "topology.kubernetes.io/zone".to_string(),
        when_unsatisfiable: "DoNotSchedule".to_string(),
        ..Default::default()
    };
    let got = topology_spread_constraint(&c, &pod_labels).unwrap();
    assert_eq!(
        got.label_selector,
        Some(LabelSelector::from_match_labels([("app", "web"), ("pod-template-hash", "abc")]))
    );
    assert_eq!(got.node_affinity_policy, InclusionPolicy::Honor);
    assert_eq!(got.node_taints_policy, InclusionPolicy::Ignore);
    let bad = k8s::TopologySpreadConstraint { when_unsatisfiable: "Maybe".to_string(), ..c };
    assert_eq!(
        topology_spread_constraint(&bad, &pod_labels).unwrap_err().field,
        "whenUnsatisfiable"
    );
}

#[test]
fn image_names_are_normalized_as_image_locality_does() {
    let cases: &[(&str, &str)] = &[
        ("nginx", "nginx:latest"),
        ("nginx:1.25", "nginx:1.25"),
        ("registry:5000/app", "registry:5000/app:latest"),
        ("registry:5000/app:v2", "registry:5000/app:v2"),
        ("repo/app@sha256:abc", "repo/app@sha256:abc"),
        ("", ":latest"),
    ];
    for (input, want) in cases {
        assert_eq!(normalized_image_name(input), *want, "{input:?}");
    }
}

#[test]
fn host_ports_follow_upstream_defaults() {
    let port =
        |container_port: i32, host_port: Option<i32>, ip: Option<&str>, proto: Option<&str>| {
            k8s::ContainerPort {
                container_port,
                host_port,
                host_ip: ip.map(str::to_string),
                protocol: proto.map(str::to_string),
                name: None,
            }
        };
    let spec = |host_network: bool, ports: Vec<k8s::ContainerPort>| k8s::PodSpec {
        host_network: Some(host_network),
        containers: vec![k8s::Container {
            name: "c".to_string(),
            ports: Some(ports),
            ..Default::default()
        }],
        ..Default::default()
    };
    let hp = |ip: &str, proto: &str, port: i32| HostPort {
        host_ip: ip.to_string(),
        protocol: proto.to_string(),
        port,
    };
    let cases = vec![
        (
            "a container port without hostPort is not a host port",
            spec(false, vec![port(80, None, None, None)]),
            vec![],
        ),
        (
            "hostIP defaults to 0.0.0.0 and protocol to TCP",
            spec(false, vec![port(80, Some(8080), None, None)]),
            vec![hp("0.0.0.0", "TCP", 8080)],
        ),
        (
            "an explicit host IP and protocol are kept",
            spec(false, vec![port(53, Some(53), Some("10.0.0.1"), Some("UDP"))]),
            vec![hp("10.0.0.1", "UDP", 53)],
        ),
        (
            "with hostNetwork the container port becomes the host port",
            spec(true, vec![port(9100, None, None, None)]),
            vec![hp("0.0.0.0", "TCP", 9100)],
        ),
        (
            "duplicates are listed once",
            spec(
                false,
                vec![port(80, Some(80), None, None), port(80, Some(80), None, Some("TCP"))],
            ),
            vec![hp("0.0.0.0", "TCP", 80)],
        ),
    ];
    for (name, s, want) in cases {
        assert_eq!(host_ports(&s), want, "{name}");
    }
}

#[test]
fn sidecar_host_ports_count_and_plain_init_container_ports_do_not() {
    let container = |name: &str, restart: Option<&str>, host_port: i32| k8s::Container {
        name: name.to_string(),
        restart_policy: restart.map(str::to_string),
        ports: Some(vec![k8s::ContainerPort {
            container_port: host_port,
            host_port: Some(host_port),
            ..Default::default()
        }]),
        ..Default::default()
    };
    let spec = k8s::PodSpec {
        init_containers: Some(vec![
            container("setup", None, 7000),
            container("proxy", Some("Always"), 15001),
        ]),
        containers: vec![container("app", None, 8080)],
        ..Default::default()
    };
    let ports: Vec<i32> = host_ports(&spec).iter().map(|p| p.port).collect();
    assert_eq!(ports, [15001, 8080]);
}

#[test]
fn tolerations_and_taints_validate_their_enums() {
    let t = k8s::Toleration { operator: Some("Sometimes".to_string()), ..Default::default() };
    assert_eq!(toleration(&t).unwrap_err().field, "operator");
    let t = k8s::Toleration { effect: Some("NoWay".to_string()), ..Default::default() };
    assert_eq!(toleration(&t).unwrap_err().field, "effect");
    let t = k8s::Toleration { operator: Some("Exists".to_string()), ..Default::default() };
    assert_eq!(
        toleration(&t).unwrap(),
        Toleration {
            key: String::new(),
            operator: TolerationOperator::Exists,
            value: String::new(),
            effect: None,
            toleration_seconds: None,
        }
    );
    let taint_in =
        k8s::Taint { key: "k".into(), effect: "NoSchedule".into(), ..Default::default() };
    assert_eq!(taint(&taint_in).unwrap().effect, TaintEffect::NoSchedule);
}

#[test]
fn claims_keep_what_the_volume_pre_filters_read() {
    let claim_of = |json: serde_json::Value| {
        claim(&serde_json::from_value::<k8s::PersistentVolumeClaim>(json).unwrap())
    };
    let (ns, name, c) = claim_of(serde_json::json!({
        "metadata": {"name": "data", "annotations": {
            "pv.kubernetes.io/bind-completed": "yes",
            "volume.beta.kubernetes.io/storage-class": "beta"},
            "deletionTimestamp": "2026-01-01T00:00:00Z",
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Pod", "name": "a", "uid": "u-a"},
                {"apiVersion": "v1", "kind": "Pod", "name": "b", "uid": "u-b", "controller": true}]},
        "spec": {"volumeName": "pv-1", "storageClassName": "spec", "accessModes": ["ReadWriteOncePod"]},
        "status": {"phase": "Lost"}
    }));
    assert_eq!((ns.as_str(), name.as_str()), ("default", "data"));
    let want = Claim {
        volume_name: "pv-1".into(),
        bind_completed: true,
        storage_class: "beta".into(),
        lost: true,
        deleting: true,
        controller_uid: Some("u-b".into()),
        read_write_once_pod: true,
    };
    assert_eq!(c, want, "the beta annotation wins over spec.storageClassName");
    let (_, _, c) = claim_of(serde_json::json!({
        "metadata": {"name": "x", "namespace": "ns"},
        "spec": {"storageClassName": "fast"}
    }));
    assert_eq!(c, Claim { storage_class: "fast".into(), ..Claim::default() });
    assert!(!c.fully_bound());
}

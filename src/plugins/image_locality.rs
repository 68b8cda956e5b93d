//! ImageLocality: a score that prefers nodes which already hold the pod's container images,
//! damped by how widely each image is spread over the cluster.
//!
//! Input: the pod's images ([`Pod::images`]), each node's images ([`Node::images`]) and the
//! number of nodes in the cluster. Output: a score in `[0, 100]`; no normalization.
//!
//! Upstream (v1.35): `pkg/scheduler/framework/plugins/imagelocality/image_locality.go`, with the
//! image states of `pkg/scheduler/backend/cache/snapshot.go` (`createImageExistenceMap`,
//! `getNodeImageStates`). The steps:
//! 1. Each pod image name is normalized (`normalized_image_name`: `:latest` is appended when the
//!    name has no tag, i.e. its last `:` is not after its last `/`).
//! 2. On the node, an image name maps to the size of the last `status.images` entry listing it;
//!    `num_nodes` is the number of nodes in the whole cluster (not only feasible ones) listing it.
//! 3. Each pod image present on the node adds
//!    `int64(float64(size) · (float64(num_nodes) / float64(total_nodes)))`.
//! 4. The sum is clamped to `[23 MiB, 1000 MiB × number of containers]` and mapped linearly to
//!    `100 · (sum − 23 MiB) / (max − 23 MiB)` with int64 truncation.
//!
//! Upstream counts the pod's init containers and app containers (all of them) both when summing
//! and as "number of containers"; kplace expects [`Pod::images`] to hold one entry per init and
//! app container, duplicates kept, so `images.len()` is that count.
//!
//! Step 3 is `float64` arithmetic upstream and here. It is not the same as the integer
//! `size · num_nodes / total_nodes` in every case (the quotient is rounded before the product);
//! a GPU port must use binary64 or take these per-(image, node) terms from the CPU.

use std::collections::BTreeMap;

use crate::framework::{MAX_NODE_SCORE, Status};
use crate::model::{ClusterState, Node, Pod};

/// One mebibyte.
const MB: i64 = 1024 * 1024;
/// Below this sum the score is 0 (upstream `minThreshold`, 23 MiB).
pub const MIN_THRESHOLD: i64 = 23 * MB;
/// Per container, above this sum the score is 100 (upstream `maxContainerThreshold`, 1000 MiB).
pub const MAX_CONTAINER_THRESHOLD: i64 = 1000 * MB;

/// The CRI-compliant name upstream compares: `:latest` appended to a name without a tag
/// (upstream `normalizedImageName`).
pub fn normalized_image_name(name: &str) -> String {
    let last_colon = name.rfind(':');
    let last_slash = name.rfind('/');
    // Go's strings.LastIndex gives -1 when absent; `None < Some(_)` keeps the same order.
    if last_colon <= last_slash { format!("{name}:latest") } else { name.to_string() }
}

/// The size of the image named `name` on `node`: the last `status.images` entry that lists the
/// name wins, as upstream builds its map.
fn node_image_size(node: &Node, name: &str) -> Option<i64> {
    node.images
        .iter()
        .rev()
        .find(|img| img.names.iter().any(|n| n == name))
        .map(|img| img.size_bytes)
}

/// One image's score on a node: its size scaled by its spread (upstream `scaledImageScore`).
pub fn scaled_image_score(size: i64, num_nodes: usize, total_num_nodes: usize) -> i64 {
    let spread = num_nodes as f64 / total_num_nodes as f64;
    (size as f64 * spread) as i64
}

/// The node score from the summed image scores (upstream `calculatePriority`).
pub fn calculate_priority(sum_scores: i64, num_containers: usize) -> i64 {
    let max_threshold = MAX_CONTAINER_THRESHOLD * num_containers as i64;
    let sum = if sum_scores < MIN_THRESHOLD {
        MIN_THRESHOLD
    } else if sum_scores > max_threshold {
        max_threshold
    } else {
        sum_scores
    };
    MAX_NODE_SCORE * (sum - MIN_THRESHOLD) / (max_threshold - MIN_THRESHOLD)
}

/// The ImageLocality plugin. It has no arguments.
#[derive(Debug, Clone, Copy, Default)]
pub struct ImageLocality;

/// Per-pod state computed at PreScore: the pod's normalized images and how many nodes of the
/// cluster hold each of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageLocalityPreScore {
    /// The pod's images, normalized, one per container (init and app), in order.
    pub images: Vec<String>,
    /// For each distinct image of the pod, the number of cluster nodes listing it.
    pub num_nodes: BTreeMap<String, usize>,
    /// The number of nodes in the cluster.
    pub total_num_nodes: usize,
}

impl ImageLocality {
    /// The plugin name used in profiles and statuses.
    pub const NAME: &str = "ImageLocality";

    /// The plugin.
    pub fn new() -> Self {
        ImageLocality
    }

    /// Counts, over every node of the cluster, how many hold each of the pod's images. Never
    /// skips.
    pub fn pre_score(
        &self,
        pod: &Pod,
        cluster: &ClusterState,
        _feasible: &[usize],
    ) -> Result<ImageLocalityPreScore, Status> {
        let images: Vec<String> = pod.images.iter().map(|i| normalized_image_name(i)).collect();
        let mut num_nodes = BTreeMap::new();
        for image in &images {
            if num_nodes.contains_key(image) {
                continue;
            }
            let count = cluster
                .nodes
                .iter()
                .filter(|n| n.images.iter().any(|img| img.names.iter().any(|x| x == image)))
                .count();
            num_nodes.insert(image.clone(), count);
        }
        Ok(ImageLocalityPreScore { images, num_nodes, total_num_nodes: cluster.nodes.len() })
    }

    /// The node's score for the pod's images.
    pub fn score(&self, state: &ImageLocalityPreScore, _pod: &Pod, node: &Node) -> i64 {
        let mut sum = 0i64;
        for image in &state.images {
            let Some(size) = node_image_size(node, image) else { continue };
            let num_nodes = state.num_nodes.get(image).copied().unwrap_or(0);
            sum += scaled_image_score(size, num_nodes, state.total_num_nodes);
        }
        calculate_priority(sum, state.images.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::testing::{NodeBuilder, PodBuilder, cluster};

    /// Upstream's `node403002000`: gcr.io/40 (40 MiB), gcr.io/300 (300 MiB), gcr.io/2000 (2000 MiB).
    fn node_40_300_2000(name: &str) -> Node {
        NodeBuilder::new(name)
            .image(&["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40 * MB)
            .image(&["gcr.io/300:latest", "gcr.io/300:v1"], 300 * MB)
            .image(&["gcr.io/2000:latest"], 2000 * MB)
            .obj()
    }

    /// Upstream's `node25010`: gcr.io/250 (250 MiB), gcr.io/10 (10 MiB).
    fn node_250_10(name: &str) -> Node {
        NodeBuilder::new(name)
            .image(&["gcr.io/250:latest"], 250 * MB)
            .image(&["gcr.io/10:latest", "gcr.io/10:v1"], 10 * MB)
            .obj()
    }

    fn pod_with_images(images: &[&str]) -> Pod {
        images.iter().fold(PodBuilder::new("ns", "p"), |b, i| b.image(i)).obj()
    }

    /// Cases from upstream `TestImageLocalityPriority`.
    #[test]
    fn score_follows_image_sizes_spread_and_thresholds() {
        struct Case {
            name: &'static str,
            pod: Pod,
            nodes: Vec<Node>,
            want: Vec<i64>,
        }
        let cases = vec![
            Case {
                // m1 has gcr.io/40 on 1 of 2 nodes: 40 MiB · 1/2 = 20 MiB < 23 MiB → 0.
                // m2 has gcr.io/250 on 1 of 2 nodes: 125 MiB; 2 containers, max 2000 MiB:
                // 100 · (125 − 23) / (2000 − 23) = 10200 / 1977 = 5.
                name: "two images spread on two nodes prefer the node with the larger image",
                pod: pod_with_images(&["gcr.io/40", "gcr.io/250"]),
                nodes: vec![node_40_300_2000("m1"), node_250_10("m2")],
                want: vec![0, 5],
            },
            Case {
                // m1: 40/2 + 300/2 = 170 MiB → 100 · (170 − 23) / 1977 = 14700 / 1977 = 7.
                // m2 has neither → 0.
                name: "two images on one node prefer that node",
                pod: pod_with_images(&["gcr.io/40", "gcr.io/300"]),
                nodes: vec![node_40_300_2000("m1"), node_250_10("m2")],
                want: vec![7, 0],
            },
            Case {
                // m1: 2000/2 = 1000 MiB → 100 · 977 / 1977 = 49. m2: 10/2 = 5 MiB → 0.
                name: "sizes between the thresholds scale linearly",
                pod: pod_with_images(&["gcr.io/2000", "gcr.io/10"]),
                nodes: vec![node_40_300_2000("m1"), node_250_10("m2")],
                want: vec![49, 0],
            },
            Case {
                // One container: max 1000 MiB. m1: 2000 · 1/2 = 1000 MiB → 100.
                name: "a sum at or above the maximum threshold scores 100",
                pod: pod_with_images(&["gcr.io/2000"]),
                nodes: vec![node_40_300_2000("m1"), node_250_10("m2")],
                want: vec![100, 0],
            },
            Case {
                // Three nodes: 2000 MiB · 1/3 = 699050666 bytes (float, truncated) on m1;
                // 100 · (699050666 − 24117248) / (2097152000 − 24117248) = 32.
                name: "an image on fewer of the nodes counts for less",
                pod: pod_with_images(&["gcr.io/2000", "gcr.io/10"]),
                nodes: vec![
                    node_40_300_2000("m1"),
                    node_250_10("m2"),
                    NodeBuilder::new("m3").obj(),
                ],
                want: vec![32, 0, 0],
            },
            Case {
                // Both nodes hold gcr.io/300: 300 MiB · 2/2 = 300 MiB on each;
                // one container: 100 · (300 − 23) / 977 = 28.
                name: "an image on every node counts at full size",
                pod: pod_with_images(&["gcr.io/300:v1"]),
                nodes: vec![node_40_300_2000("m1"), node_40_300_2000("m2")],
                want: vec![28, 28],
            },
            Case {
                // gcr.io/300 (no tag) normalizes to gcr.io/300:latest and matches.
                name: "an untagged pod image matches the node's latest tag",
                pod: pod_with_images(&["gcr.io/300"]),
                nodes: vec![node_40_300_2000("m1"), node_40_300_2000("m2")],
                want: vec![28, 28],
            },
        ];
        let pl = ImageLocality::new();
        for c in cases {
            let cl = cluster(c.nodes, vec![]);
            let feasible: Vec<usize> = (0..cl.nodes.len()).collect();
            let state = pl.pre_score(&c.pod, &cl, &feasible).expect("never skips");
            let got: Vec<i64> = cl.nodes.iter().map(|n| pl.score(&state, &c.pod, n)).collect();
            assert_eq!(got, c.want, "{}", c.name);
        }
        // The spread arithmetic of the three-node case.
        assert_eq!(scaled_image_score(2000 * MB, 1, 3), 699_050_666);
        assert_eq!(calculate_priority(699_050_666, 2), 32);
    }

    /// Cases from upstream `TestNormalizedImageName`.
    #[test]
    fn image_names_get_the_latest_tag_only_when_untagged() {
        let digest = "root@sha256:4355a46b19d348dc2f57c046f8ef63d4538ebb936000f3c9ee954a27460dd865";
        let cases: &[(&str, &str, &str)] = &[
            ("a bare name gets :latest", "root", "root:latest"),
            ("a registry port is not a tag", "gcr.io:5000/root", "gcr.io:5000/root:latest"),
            ("a tagged name is kept", "root:tag", "root:tag"),
            ("a digest is kept", digest, digest),
        ];
        for (name, input, want) in cases {
            assert_eq!(normalized_image_name(input), *want, "{name}");
        }
    }

    #[test]
    fn a_pod_without_images_scores_zero_on_every_node() {
        // No containers: the sum is 0, clamped to 23 MiB, and 100 · 0 / (0 − 23 MiB) = 0.
        assert_eq!(calculate_priority(0, 0), 0);
        let cl = cluster(vec![node_40_300_2000("m1")], vec![]);
        let pod = PodBuilder::new("ns", "p").obj();
        let pl = ImageLocality::new();
        let state = pl.pre_score(&pod, &cl, &[0]).expect("never skips");
        assert_eq!(pl.score(&state, &pod, &cl.nodes[0]), 0);
    }

    #[test]
    fn the_last_image_entry_listing_a_name_gives_its_size() {
        let node = NodeBuilder::new("n").image(&["a:1"], 10).image(&["a:1", "b:1"], 20).obj();
        assert_eq!(node_image_size(&node, "a:1"), Some(20));
        assert_eq!(node_image_size(&node, "c:1"), None);
    }
}

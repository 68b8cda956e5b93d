//! Tests of the rebalancing objectives on constructed clusters.

// Package manifests holds no code: its tests check the deployment files of
// the repository (deploy/docker, deploy/compose.yaml, deploy/kubernetes).
//
// The Kubernetes overlays are rendered with the kustomize library, the same
// code `kubectl apply -k` runs, so the tests see exactly what a cluster
// would receive, without kubectl or a cluster on the machine.
package manifests

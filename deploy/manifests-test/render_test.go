package manifests

import (
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// repoRoot is the repository's root, found from this file's location so the
// tests run from any working directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the test source")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// rendered is one overlay after kustomize, decoded.
type rendered struct {
	overlay         string
	objects         []object
	deployments     map[string]deployment
	services        map[string]service
	hpas            map[string]hpa
	pdbs            map[string]pdb
	networkPolicies []networkPolicy
	secrets         map[string]secret
	configMaps      map[string]configMap
}

// render builds deploy/kubernetes/overlays/<overlay> exactly as
// `kubectl apply -k` would and decodes the objects the tests look at.
func render(t *testing.T, overlay string) *rendered {
	t.Helper()
	dir := filepath.Join(repoRoot(t), "deploy", "kubernetes", "overlays", overlay)
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", overlay, err)
	}
	r := &rendered{
		overlay:     overlay,
		deployments: map[string]deployment{},
		services:    map[string]service{},
		hpas:        map[string]hpa{},
		pdbs:        map[string]pdb{},
		secrets:     map[string]secret{},
		configMaps:  map[string]configMap{},
	}
	for _, res := range resMap.Resources() {
		doc, err := res.AsYAML()
		if err != nil {
			t.Fatalf("%s: %v", res.CurId(), err)
		}
		var head object
		decode(t, doc, &head)
		r.objects = append(r.objects, head)
		name := head.Metadata.Name
		switch head.Kind {
		case "Deployment":
			var d deployment
			decode(t, doc, &d)
			r.deployments[name] = d
		case "Service":
			var s service
			decode(t, doc, &s)
			r.services[name] = s
		case "HorizontalPodAutoscaler":
			var h hpa
			decode(t, doc, &h)
			r.hpas[name] = h
		case "PodDisruptionBudget":
			var p pdb
			decode(t, doc, &p)
			r.pdbs[name] = p
		case "NetworkPolicy":
			var n networkPolicy
			decode(t, doc, &n)
			r.networkPolicies = append(r.networkPolicies, n)
		case "Secret":
			var s secret
			decode(t, doc, &s)
			r.secrets[name] = s
		case "ConfigMap":
			var c configMap
			decode(t, doc, &c)
			r.configMaps[name] = c
		}
	}
	return r
}

func decode(t *testing.T, doc []byte, into any) {
	t.Helper()
	if err := yaml.Unmarshal(doc, into); err != nil {
		t.Fatalf("decode %T: %v\n%s", into, err, doc)
	}
}

// subset reports whether every label of sel is in labels (an empty selector
// selects everything, as in a NetworkPolicy's podSelector).
func subset(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// portMatches reports whether a port given as a number or a name (as in
// probes, targetPort and NetworkPolicy ports) is the container's port.
func portMatches(p any, c container) bool {
	switch v := p.(type) {
	case float64: // sigs.k8s.io/yaml decodes through JSON
		for _, cp := range c.Ports {
			if float64(cp.ContainerPort) == v {
				return true
			}
		}
	case string:
		for _, cp := range c.Ports {
			if cp.Name == v || strconv.Itoa(int(cp.ContainerPort)) == v {
				return true
			}
		}
	}
	return false
}

// quantity parses the Kubernetes quantities used here (cpu "250m", "2";
// memory "64Mi", "1Gi") into a comparable number.
func quantity(s string) (float64, error) {
	suffixes := []struct {
		suffix string
		factor float64
	}{
		{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40},
		{"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"m", 1e-3},
	}
	for _, sf := range suffixes {
		if num, ok := strings.CutSuffix(s, sf.suffix); ok {
			v, err := strconv.ParseFloat(num, 64)
			return v * sf.factor, err
		}
	}
	return strconv.ParseFloat(s, 64)
}

// containerOf is the one container of a component's Deployment.
func containerOf(t *testing.T, d deployment) container {
	t.Helper()
	cs := d.Spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("deployment %s: want exactly one container, got %d", d.Metadata.Name, len(cs))
	}
	return cs[0]
}

// envOf is the environment a container sees from its ConfigMaps (envFrom)
// and its literal env values; secret references are returned apart.
func envOf(t *testing.T, r *rendered, c container) (plain map[string]string, fromSecret map[string]string) {
	t.Helper()
	plain, fromSecret = map[string]string{}, map[string]string{}
	for _, ef := range c.EnvFrom {
		if ef.ConfigMapRef == nil {
			continue
		}
		cm, ok := r.configMaps[ef.ConfigMapRef.Name]
		if !ok {
			t.Errorf("%s: container %s reads ConfigMap %q, which the overlay does not render", r.overlay, c.Name, ef.ConfigMapRef.Name)
			continue
		}
		for k, v := range cm.Data {
			plain[k] = v
		}
	}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			delete(plain, e.Name)
			fromSecret[e.Name] = e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
		case e.ValueFrom == nil:
			plain[e.Name] = e.Value
		}
	}
	return plain, fromSecret
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

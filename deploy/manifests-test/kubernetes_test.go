package manifests

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// component is what the manifests must get right about one binary.
type component struct {
	name string
	port int32
	// listenVar is the variable that sets where it listens.
	listenVar string
	// secretEnv must come from secretKeyRef.
	secretEnv []string
	// plainEnv must be set (from the ConfigMap).
	plainEnv []string
	// callers are the components allowed to reach it; nil: anyone.
	callers []string
}

var components = []component{
	{
		name: "gateway", port: 8080, listenVar: "GATEWAY_ADDR",
		plainEnv: []string{"WORKSPACE_SERVICE_ADDR", "AUTH_SERVICE_ADDR", "SHUTDOWN_TIMEOUT"},
	},
	{
		name: "workspace", port: 9090, listenVar: "WORKSPACE_GRPC_ADDR",
		secretEnv: []string{"MONGODB_URI", "KEY_ENCRYPTION_KEY", "KEY_HMAC_KEY", "BOOTSTRAP_APP_KEY", "BOOTSTRAP_APP_SECRET"},
		plainEnv:  []string{"AUTH_SERVICE_ADDR", "REDIS_ADDR", "SHUTDOWN_TIMEOUT"},
		callers:   []string{"auth", "gateway"},
	},
	{
		name: "auth", port: 9091, listenVar: "AUTH_GRPC_ADDR",
		secretEnv: []string{"SERVICE_APP_KEY", "SERVICE_APP_SECRET"},
		plainEnv:  []string{"REDIS_ADDR", "WORKSPACE_SERVICE_ADDR", "SHUTDOWN_TIMEOUT"},
		callers:   []string{"gateway", "workspace"},
	},
}

// secretOnly are variables that hold secrets (or credentials, as a MongoDB
// URI usually does): never a literal value, never in a ConfigMap.
var secretOnly = []string{
	"MONGODB_URI", "KEY_ENCRYPTION_KEY", "KEY_HMAC_KEY",
	"BOOTSTRAP_APP_KEY", "BOOTSTRAP_APP_SECRET", "SERVICE_APP_KEY", "SERVICE_APP_SECRET",
	"REDIS_USERNAME", "REDIS_PASSWORD",
}

var overlays = []string{"production", "local"}

func TestOverlays(t *testing.T) {
	for _, overlay := range overlays {
		t.Run(overlay, func(t *testing.T) {
			r := render(t, overlay)
			for _, c := range components {
				t.Run(c.name, func(t *testing.T) {
					checkDeployment(t, r, c)
					checkService(t, r, c)
					checkAutoscaling(t, r, c)
					checkEnv(t, r, c)
				})
			}
			t.Run("labels and namespace", func(t *testing.T) { checkLabels(t, r) })
			t.Run("network policies", func(t *testing.T) { checkNetworkPolicies(t, r) })
			t.Run("config holds no secrets", func(t *testing.T) {
				for name, cm := range r.configMaps {
					for _, k := range secretOnly {
						if _, ok := cm.Data[k]; ok {
							t.Errorf("ConfigMap %s holds %s, a secret", name, k)
						}
					}
				}
			})
		})
	}
}

func checkDeployment(t *testing.T, r *rendered, comp component) {
	d, ok := r.deployments[comp.name]
	if !ok {
		t.Fatalf("no Deployment %q", comp.name)
	}
	pod := d.Spec.Template
	if !subset(d.Spec.Selector.MatchLabels, pod.Metadata.Labels) || len(d.Spec.Selector.MatchLabels) == 0 {
		t.Errorf("selector %v does not select the pod template's labels %v", d.Spec.Selector.MatchLabels, pod.Metadata.Labels)
	}
	if pod.Metadata.Labels["app.kubernetes.io/name"] != comp.name {
		t.Errorf("pod label app.kubernetes.io/name = %q, want %q", pod.Metadata.Labels["app.kubernetes.io/name"], comp.name)
	}
	c := containerOf(t, d)
	if !portMatches(float64(comp.port), c) {
		t.Errorf("container does not declare port %d", comp.port)
	}

	// Probes of the right kind, on the component's port.
	if c.ReadinessProbe == nil || c.LivenessProbe == nil {
		t.Fatalf("readiness probe %v, liveness probe %v: want both", c.ReadinessProbe != nil, c.LivenessProbe != nil)
	}
	if comp.name == "gateway" {
		checkHTTPProbe(t, "readiness", c.ReadinessProbe, "/readyz", c)
		checkHTTPProbe(t, "liveness", c.LivenessProbe, "/healthz", c)
	} else {
		// Readiness follows the gRPC health service (NOT_SERVING while the
		// store is down or during shutdown).
		if g := c.ReadinessProbe.GRPC; g == nil || g.Port != comp.port {
			t.Errorf("readiness probe: want grpc on port %d, got %+v", comp.port, c.ReadinessProbe)
		}
		// Liveness: gRPC health or a TCP check on the same port. (The
		// manifests use TCP: the health status follows the store, and a
		// store outage must not restart the pods.)
		switch l := c.LivenessProbe; {
		case l.GRPC != nil && l.GRPC.Port == comp.port:
		case l.TCPSocket != nil && portMatches(l.TCPSocket.Port, c):
		default:
			t.Errorf("liveness probe: want grpc or tcpSocket on port %d, got %+v", comp.port, l)
		}
	}

	// Requests and limits for CPU and memory, requests within limits.
	for _, res := range []string{"cpu", "memory"} {
		req, lim := c.Resources.Requests[res], c.Resources.Limits[res]
		if req == "" || lim == "" {
			t.Errorf("resources.%s: request %q, limit %q: want both", res, req, lim)
			continue
		}
		rq, err1 := quantity(req)
		lq, err2 := quantity(lim)
		if err1 != nil || err2 != nil {
			t.Errorf("resources.%s: cannot parse %q or %q", res, req, lim)
		} else if rq > lq {
			t.Errorf("resources.%s: request %s exceeds limit %s", res, req, lim)
		}
	}

	// Security context: the container's, falling back to the pod's where
	// Kubernetes does (runAsNonRoot, seccompProfile).
	podSC := pod.Spec.SecurityContext
	sc := c.SecurityContext
	if sc == nil {
		t.Fatal("container has no securityContext")
	}
	nonRoot := (sc.RunAsNonRoot != nil && *sc.RunAsNonRoot) ||
		(sc.RunAsNonRoot == nil && podSC != nil && podSC.RunAsNonRoot != nil && *podSC.RunAsNonRoot)
	if !nonRoot {
		t.Error("runAsNonRoot is not true")
	}
	for _, user := range []*int64{sc.RunAsUser, podSCUser(podSC)} {
		if user != nil && *user == 0 {
			t.Error("runAsUser is 0")
		}
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Error("readOnlyRootFilesystem is not true")
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Error("allowPrivilegeEscalation is not false")
	}
	if sc.Privileged != nil && *sc.Privileged {
		t.Error("privileged")
	}
	if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
		t.Errorf("capabilities: want drop [ALL] and nothing added, got %+v", sc.Capabilities)
	}
	seccomp := ""
	if podSC != nil && podSC.SeccompProfile != nil {
		seccomp = podSC.SeccompProfile.Type
	}
	if sc.SeccompProfile != nil {
		seccomp = sc.SeccompProfile.Type
	}
	if seccomp != "RuntimeDefault" && seccomp != "Localhost" {
		t.Errorf("seccompProfile %q, want RuntimeDefault", seccomp)
	}

	// The pod gets time to drain: the grace period must outlast the preStop
	// pause plus SHUTDOWN_TIMEOUT.
	plain, _ := envOf(t, r, c)
	shutdown, err := time.ParseDuration(plain["SHUTDOWN_TIMEOUT"])
	if err != nil {
		shutdown = 15 * time.Second // the binaries' default
	}
	var preStop time.Duration
	if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Sleep != nil {
		preStop = time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second
	}
	// The gateway keeps serving for DRAIN_DELAY after SIGTERM before it
	// starts the shutdown proper.
	var drain time.Duration
	if comp.name == "gateway" {
		drain, _ = time.ParseDuration(plain["DRAIN_DELAY"])
	}
	grace := 30 * time.Second // Kubernetes' default
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = time.Duration(*g) * time.Second
	}
	if grace <= preStop+drain+shutdown {
		t.Errorf("terminationGracePeriodSeconds %v is not above preStop %v + DRAIN_DELAY %v + SHUTDOWN_TIMEOUT %v", grace, preStop, drain, shutdown)
	}

	// A scrape annotation names a port the container declares.
	if port, ok := pod.Metadata.Annotations["prometheus.io/port"]; ok && !portMatches(port, c) {
		t.Errorf("prometheus.io/port %q is not a port of the container", port)
	}
}

func podSCUser(sc *securityContext) *int64 {
	if sc == nil {
		return nil
	}
	return sc.RunAsUser
}

func checkHTTPProbe(t *testing.T, kind string, p *probe, path string, c container) {
	t.Helper()
	if p.HTTPGet == nil || p.HTTPGet.Path != path || !portMatches(p.HTTPGet.Port, c) {
		t.Errorf("%s probe: want httpGet %s on the container's port, got %+v", kind, path, p)
	}
}

func checkService(t *testing.T, r *rendered, comp component) {
	s, ok := r.services[comp.name]
	if !ok {
		t.Fatalf("no Service %q", comp.name)
	}
	d := r.deployments[comp.name]
	if len(s.Spec.Selector) == 0 || !subset(s.Spec.Selector, d.Spec.Template.Metadata.Labels) {
		t.Errorf("Service selector %v does not select the %s pods (%v)", s.Spec.Selector, comp.name, d.Spec.Template.Metadata.Labels)
	}
	// It must select no other component's pods.
	for _, other := range components {
		if other.name != comp.name && subset(s.Spec.Selector, r.deployments[other.name].Spec.Template.Metadata.Labels) {
			t.Errorf("Service %s also selects the %s pods", comp.name, other.name)
		}
	}
	c := containerOf(t, d)
	found := false
	for _, p := range s.Spec.Ports {
		target := p.TargetPort
		if target == nil {
			target = float64(p.Port)
		}
		if p.Port == comp.port && portMatches(target, c) {
			found = true
		}
	}
	if !found {
		t.Errorf("Service %s does not expose port %d onto the container's port", comp.name, comp.port)
	}
}

func checkAutoscaling(t *testing.T, r *rendered, comp component) {
	h, ok := r.hpas[comp.name]
	if !ok {
		t.Errorf("no HorizontalPodAutoscaler %q", comp.name)
	} else {
		if h.APIVersion != "autoscaling/v2" {
			t.Errorf("HPA apiVersion %q, want autoscaling/v2", h.APIVersion)
		}
		ref := h.Spec.ScaleTargetRef
		if ref.Kind != "Deployment" || ref.Name != comp.name || ref.APIVersion != "apps/v1" {
			t.Errorf("HPA scales %+v, want apps/v1 Deployment %s", ref, comp.name)
		}
		if h.Spec.MinReplicas == nil || *h.Spec.MinReplicas < 1 || *h.Spec.MinReplicas > h.Spec.MaxReplicas {
			t.Errorf("HPA min %v max %d", h.Spec.MinReplicas, h.Spec.MaxReplicas)
		}
		cpu := false
		for _, m := range h.Spec.Metrics {
			if m.Type == "Resource" && m.Resource != nil && m.Resource.Name == "cpu" {
				cpu = true
			}
		}
		if !cpu {
			t.Error("HPA has no CPU metric")
		}
		// With an HPA, a replica count in the Deployment would fight it on
		// every apply.
		if d := r.deployments[comp.name]; d.Spec.Replicas != nil {
			t.Errorf("Deployment %s sets replicas (%d) although an HPA owns the count", comp.name, *d.Spec.Replicas)
		}
	}

	p, ok := r.pdbs[comp.name]
	if !ok {
		t.Errorf("no PodDisruptionBudget %q", comp.name)
		return
	}
	if p.APIVersion != "policy/v1" {
		t.Errorf("PDB apiVersion %q, want policy/v1", p.APIVersion)
	}
	if (p.Spec.MinAvailable == nil) == (p.Spec.MaxUnavailable == nil) {
		t.Error("PDB: want exactly one of minAvailable and maxUnavailable")
	}
	labels := r.deployments[comp.name].Spec.Template.Metadata.Labels
	if len(p.Spec.Selector.MatchLabels) == 0 || !subset(p.Spec.Selector.MatchLabels, labels) {
		t.Errorf("PDB selector %v does not select the %s pods", p.Spec.Selector.MatchLabels, comp.name)
	}
}

// checkEnv: secrets come from secretKeyRef, settings from the ConfigMap, and
// the addresses point at the right Services and ports.
func checkEnv(t *testing.T, r *rendered, comp component) {
	c := containerOf(t, r.deployments[comp.name])
	plain, fromSecret := envOf(t, r, c)
	for _, name := range comp.secretEnv {
		if _, ok := fromSecret[name]; !ok {
			t.Errorf("%s does not come from a secretKeyRef", name)
		}
	}
	for _, name := range secretOnly {
		if v, ok := plain[name]; ok {
			t.Errorf("%s is a plain value (%q), want a secretKeyRef", name, v)
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil && e.Value != "" && slices.Contains(secretOnly, e.Name) {
			t.Errorf("%s has a literal value", e.Name)
		}
	}
	for _, name := range append([]string{comp.listenVar}, comp.plainEnv...) {
		if plain[name] == "" {
			t.Errorf("%s is not set", name)
		}
	}
	if _, port, err := net.SplitHostPort(plain[comp.listenVar]); err != nil || port != strconv.Itoa(int(comp.port)) {
		t.Errorf("%s = %q, want port %d", comp.listenVar, plain[comp.listenVar], comp.port)
	}
	for _, name := range sortedKeys(plain) {
		target, ok := strings.CutSuffix(name, "_SERVICE_ADDR")
		if !ok {
			continue
		}
		// A client reaches every replica only through a name that
		// resolves to each of them: dns:/// and a headless Service.
		endpoint, ok := strings.CutPrefix(plain[name], "dns:///")
		if !ok {
			t.Errorf("%s = %q, want dns:///<service>:<port>, which resolves to every replica", name, plain[name])
			continue
		}
		fqdn, port, err := net.SplitHostPort(endpoint)
		if err != nil {
			t.Errorf("%s = %q: %v", name, plain[name], err)
			continue
		}
		host, _, _ := strings.Cut(fqdn, ".") // "workspace" or "workspace.ns.svc…"
		want := strings.ToLower(target)
		s, ok := r.services[host]
		if host != want || !ok {
			t.Errorf("%s = %q, want the %s Service", name, plain[name], want)
			continue
		}
		if s.Spec.ClusterIP != "None" {
			t.Errorf("%s names Service %s, whose clusterIP is %q: want None (headless), or kube-proxy balances connections, not calls", name, host, s.Spec.ClusterIP)
		}
		if s.Spec.PublishNotReadyAddresses {
			t.Errorf("Service %s publishes pods that are not ready: its clients would send calls to replicas that cannot serve them yet", host)
		}
		if ns := namespaceOf(r); !slices.Contains([]string{host, host + "." + ns, host + "." + ns + ".svc", host + "." + ns + ".svc.cluster.local"}, fqdn) {
			t.Errorf("%s = %q: the name must be the Service's, alone or in this overlay's namespace %q", name, plain[name], ns)
		}
		// No proxy stands behind a headless Service: clients connect to
		// the pods' own addresses, on the target's port.
		if !portMatches(port, containerOf(t, r.deployments[host])) {
			t.Errorf("%s = %q: the %s container does not listen on port %s", name, plain[name], host, port)
		}
		if !slices.ContainsFunc(s.Spec.Ports, func(p struct {
			Name       string `json:"name"`
			Port       int32  `json:"port"`
			TargetPort any    `json:"targetPort"`
		}) bool {
			return strconv.Itoa(int(p.Port)) == port
		}) {
			t.Errorf("%s = %q: Service %s has no port %s", name, plain[name], host, port)
		}
	}
}

// namespaceOf is the namespace the overlay renders, or "" if none.
func namespaceOf(r *rendered) string {
	for _, o := range r.objects {
		if o.Kind == "Namespace" {
			return o.Metadata.Name
		}
	}
	return ""
}

func checkLabels(t *testing.T, r *rendered) {
	namespace := namespaceOf(r)
	if namespace == "" {
		t.Error("the overlay renders no Namespace")
	}
	for _, o := range r.objects {
		if o.Metadata.Labels["app.kubernetes.io/part-of"] != "workspaces" && o.Kind != "Namespace" {
			t.Errorf("%s %s: no label app.kubernetes.io/part-of=workspaces", o.Kind, o.Metadata.Name)
		}
		if o.Kind != "Namespace" && o.Metadata.Namespace != namespace {
			t.Errorf("%s %s: namespace %q, want %q", o.Kind, o.Metadata.Name, o.Metadata.Namespace, namespace)
		}
	}
	for _, comp := range components {
		d := r.deployments[comp.name]
		for _, labels := range []map[string]string{d.Metadata.Labels, d.Spec.Template.Metadata.Labels} {
			if labels["app.kubernetes.io/name"] != comp.name || labels["app.kubernetes.io/part-of"] != "workspaces" {
				t.Errorf("Deployment %s: labels %v lack app.kubernetes.io/name or part-of", comp.name, labels)
			}
		}
	}
}

// ingressSources evaluates the NetworkPolicies for traffic to a component's
// main port (other ports, such as metrics, may have their own rules): whether a source outside the namespace's pods (anywhere) may connect,
// and which of the components may.
func ingressSources(r *rendered, dest component) (isolated, anywhere bool, from []string) {
	d := r.deployments[dest.name]
	labels := d.Spec.Template.Metadata.Labels
	c := d.Spec.Template.Spec.Containers[0]
	allowed := map[string]bool{}
	for _, np := range r.networkPolicies {
		types := np.Spec.PolicyTypes
		if len(types) == 0 {
			types = []string{"Ingress"}
		}
		if !slices.Contains(types, "Ingress") || !np.Spec.PodSelector.matches(labels) {
			continue
		}
		isolated = true
		for _, rule := range np.Spec.Ingress {
			portOK := len(rule.Ports) == 0
			for _, p := range rule.Ports {
				if p.Port == nil || coversPort(p.Port, c, dest.port) {
					portOK = true
				}
			}
			if !portOK {
				continue
			}
			if len(rule.From) == 0 {
				anywhere = true
			}
			for _, peer := range rule.From {
				if peer.PodSelector == nil || peer.NamespaceSelector != nil || peer.IPBlock != nil {
					anywhere = true // other namespaces or addresses
					continue
				}
				for _, src := range components {
					if peer.PodSelector.matches(r.deployments[src.name].Spec.Template.Metadata.Labels) {
						allowed[src.name] = true
					}
				}
			}
		}
	}
	return isolated, anywhere, sortedKeys(allowed)
}

// coversPort reports whether a NetworkPolicy port (a number or a name of the
// container's ports) is the given port.
func coversPort(p any, c container, port int32) bool {
	switch v := p.(type) {
	case float64:
		return int32(v) == port
	case string:
		for _, cp := range c.Ports {
			if cp.ContainerPort == port && (cp.Name == v || strconv.Itoa(int(port)) == v) {
				return true
			}
		}
	}
	return false
}

func checkNetworkPolicies(t *testing.T, r *rendered) {
	defaultDeny := false
	for _, np := range r.networkPolicies {
		if np.Spec.PodSelector.empty() && slices.Contains(np.Spec.PolicyTypes, "Ingress") && len(np.Spec.Ingress) == 0 {
			defaultDeny = true
		}
	}
	if !defaultDeny {
		t.Error("no default-deny ingress NetworkPolicy (empty podSelector, Ingress, no rules)")
	}
	for _, comp := range components {
		isolated, anywhere, from := ingressSources(r, comp)
		if !isolated {
			t.Errorf("%s: no NetworkPolicy selects its pods", comp.name)
			continue
		}
		if comp.callers == nil {
			if !anywhere {
				t.Errorf("%s: does not accept traffic from anywhere on %d", comp.name, comp.port)
			}
			continue
		}
		if anywhere {
			t.Errorf("%s: accepts traffic from anywhere; want only %v", comp.name, comp.callers)
		}
		if !slices.Equal(from, comp.callers) {
			t.Errorf("%s: accepts traffic from %v, want %v", comp.name, from, comp.callers)
		}
	}
}

func TestProductionOverlay(t *testing.T) {
	prod := render(t, "production")
	local := render(t, "local")

	for name, s := range prod.secrets {
		t.Errorf("Secret %s is rendered (%d data keys): production Secrets are created out of band", name, len(s.Data)+len(s.StringData))
	}

	for _, comp := range components {
		c := containerOf(t, prod.deployments[comp.name])
		if !pinned(c.Image) {
			t.Errorf("%s: image %q is not pinned to a tag or digest other than latest", comp.name, c.Image)
		}

		pm, lm := prod.hpas[comp.name].Spec.MinReplicas, local.hpas[comp.name].Spec.MinReplicas
		if pm == nil || lm == nil || *pm < 2 || *pm <= *lm {
			t.Errorf("%s: production minReplicas %v should be at least 2 and above local's %v", comp.name, deref(pm), deref(lm))
		}
		lc := containerOf(t, local.deployments[comp.name])
		for _, res := range []string{"cpu", "memory"} {
			p, _ := quantity(c.Resources.Limits[res])
			l, _ := quantity(lc.Resources.Limits[res])
			if p <= l {
				t.Errorf("%s: production %s limit %s is not above local's %s", comp.name, res, c.Resources.Limits[res], lc.Resources.Limits[res])
			}
		}
	}
}

func TestLocalOverlay(t *testing.T) {
	r := render(t, "local")
	for _, comp := range components {
		h := r.hpas[comp.name]
		if h.Spec.MinReplicas == nil || *h.Spec.MinReplicas != 1 || h.Spec.MaxReplicas != 1 {
			t.Errorf("%s: local HPA min %v max %d, want exactly one pod", comp.name, deref(h.Spec.MinReplicas), h.Spec.MaxReplicas)
		}
		// The local overlay is self-contained: every required secret
		// reference resolves to a generated Secret with that key.
		c := containerOf(t, r.deployments[comp.name])
		for _, e := range c.Env {
			if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
				continue
			}
			ref := e.ValueFrom.SecretKeyRef
			if ref.Optional != nil && *ref.Optional {
				continue
			}
			s, ok := r.secrets[ref.Name]
			if !ok {
				t.Errorf("%s: %s refers to Secret %q, which the local overlay does not generate", comp.name, e.Name, ref.Name)
				continue
			}
			if _, ok := s.Data[ref.Key]; !ok {
				t.Errorf("%s: %s refers to key %q of Secret %s, which it lacks", comp.name, e.Name, ref.Key, ref.Name)
			}
		}
	}
}

// pinned: the image names a tag other than latest, or a digest.
func pinned(image string) bool {
	if strings.Contains(image, "@sha256:") {
		return true
	}
	slash := strings.LastIndex(image, "/")
	tag, ok := strings.CutPrefix(image[slash+1:], "")
	colon := strings.LastIndex(tag, ":")
	if !ok || colon < 0 {
		return false
	}
	return tag[colon+1:] != "" && tag[colon+1:] != "latest"
}

func deref(p *int32) any {
	if p == nil {
		return nil
	}
	return *p
}

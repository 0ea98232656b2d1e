package manifests

// The parts of the Kubernetes objects the tests look at, decoded from the
// rendered YAML with sigs.k8s.io/yaml (JSON field names). Fields the tests do
// not need are left out on purpose, so this stays small.

type meta struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

type object struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   meta   `json:"metadata"`
}

type labelSelector struct {
	MatchLabels      map[string]string `json:"matchLabels"`
	MatchExpressions []struct {
		Key      string   `json:"key"`
		Operator string   `json:"operator"`
		Values   []string `json:"values"`
	} `json:"matchExpressions"`
}

// matches reports whether the selector selects labels (an empty selector
// selects everything, as in a NetworkPolicy's podSelector).
func (s labelSelector) matches(labels map[string]string) bool {
	if !subset(s.MatchLabels, labels) {
		return false
	}
	for _, e := range s.MatchExpressions {
		v, ok := labels[e.Key]
		var in bool
		for _, want := range e.Values {
			in = in || (ok && v == want)
		}
		switch e.Operator {
		case "In":
			if !in {
				return false
			}
		case "NotIn":
			if in {
				return false
			}
		case "Exists":
			if !ok {
				return false
			}
		case "DoesNotExist":
			if ok {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func (s labelSelector) empty() bool { return len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0 }

type deployment struct {
	object
	Spec struct {
		Replicas *int32        `json:"replicas"`
		Selector labelSelector `json:"selector"`
		Template struct {
			Metadata meta    `json:"metadata"`
			Spec     podSpec `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
}

type podSpec struct {
	TerminationGracePeriodSeconds *int64           `json:"terminationGracePeriodSeconds"`
	SecurityContext               *securityContext `json:"securityContext"`
	Containers                    []container      `json:"containers"`
}

type securityContext struct {
	RunAsNonRoot             *bool  `json:"runAsNonRoot"`
	RunAsUser                *int64 `json:"runAsUser"`
	ReadOnlyRootFilesystem   *bool  `json:"readOnlyRootFilesystem"`
	AllowPrivilegeEscalation *bool  `json:"allowPrivilegeEscalation"`
	Privileged               *bool  `json:"privileged"`
	Capabilities             *struct {
		Add  []string `json:"add"`
		Drop []string `json:"drop"`
	} `json:"capabilities"`
	SeccompProfile *struct {
		Type string `json:"type"`
	} `json:"seccompProfile"`
}

type container struct {
	Name  string `json:"name"`
	Image string `json:"image"`
	Ports []struct {
		Name          string `json:"name"`
		ContainerPort int32  `json:"containerPort"`
	} `json:"ports"`
	Env     []envVar `json:"env"`
	EnvFrom []struct {
		ConfigMapRef *struct {
			Name string `json:"name"`
		} `json:"configMapRef"`
		SecretRef *struct {
			Name string `json:"name"`
		} `json:"secretRef"`
	} `json:"envFrom"`
	ReadinessProbe *probe `json:"readinessProbe"`
	LivenessProbe  *probe `json:"livenessProbe"`
	StartupProbe   *probe `json:"startupProbe"`
	Lifecycle      *struct {
		PreStop *struct {
			Sleep *struct {
				Seconds int64 `json:"seconds"`
			} `json:"sleep"`
		} `json:"preStop"`
	} `json:"lifecycle"`
	Resources struct {
		Requests map[string]string `json:"requests"`
		Limits   map[string]string `json:"limits"`
	} `json:"resources"`
	SecurityContext *securityContext `json:"securityContext"`
}

type envVar struct {
	Name      string `json:"name"`
	Value     string `json:"value"`
	ValueFrom *struct {
		SecretKeyRef *struct {
			Name     string `json:"name"`
			Key      string `json:"key"`
			Optional *bool  `json:"optional"`
		} `json:"secretKeyRef"`
		ConfigMapKeyRef *struct {
			Name string `json:"name"`
			Key  string `json:"key"`
		} `json:"configMapKeyRef"`
		ResourceFieldRef *struct {
			Resource string `json:"resource"`
		} `json:"resourceFieldRef"`
	} `json:"valueFrom"`
}

type probe struct {
	HTTPGet *struct {
		Path string `json:"path"`
		Port any    `json:"port"` // a number or a port name
	} `json:"httpGet"`
	GRPC *struct {
		Port    int32   `json:"port"`
		Service *string `json:"service"`
	} `json:"grpc"`
	TCPSocket *struct {
		Port any `json:"port"`
	} `json:"tcpSocket"`
	Exec *struct {
		Command []string `json:"command"`
	} `json:"exec"`
}

type service struct {
	object
	Spec struct {
		ClusterIP                string            `json:"clusterIP"`
		PublishNotReadyAddresses bool              `json:"publishNotReadyAddresses"`
		Selector                 map[string]string `json:"selector"`
		Ports                    []struct {
			Name       string `json:"name"`
			Port       int32  `json:"port"`
			TargetPort any    `json:"targetPort"`
		} `json:"ports"`
	} `json:"spec"`
}

type hpa struct {
	object
	Spec struct {
		ScaleTargetRef struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Name       string `json:"name"`
		} `json:"scaleTargetRef"`
		MinReplicas *int32 `json:"minReplicas"`
		MaxReplicas int32  `json:"maxReplicas"`
		Metrics     []struct {
			Type     string `json:"type"`
			Resource *struct {
				Name   string `json:"name"`
				Target struct {
					Type               string `json:"type"`
					AverageUtilization *int32 `json:"averageUtilization"`
				} `json:"target"`
			} `json:"resource"`
		} `json:"metrics"`
	} `json:"spec"`
}

type pdb struct {
	object
	Spec struct {
		MinAvailable   any           `json:"minAvailable"`
		MaxUnavailable any           `json:"maxUnavailable"`
		Selector       labelSelector `json:"selector"`
	} `json:"spec"`
}

type networkPolicy struct {
	object
	Spec struct {
		PodSelector labelSelector `json:"podSelector"`
		PolicyTypes []string      `json:"policyTypes"`
		Ingress     []struct {
			From []struct {
				PodSelector       *labelSelector `json:"podSelector"`
				NamespaceSelector *labelSelector `json:"namespaceSelector"`
				IPBlock           any            `json:"ipBlock"`
			} `json:"from"`
			Ports []struct {
				Protocol string `json:"protocol"`
				Port     any    `json:"port"`
			} `json:"ports"`
		} `json:"ingress"`
	} `json:"spec"`
}

type secret struct {
	object
	Data       map[string]string `json:"data"`
	StringData map[string]string `json:"stringData"`
}

type configMap struct {
	object
	Data map[string]string `json:"data"`
}

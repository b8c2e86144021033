module kube-authn.example/conformance/legacy

go 1.24

require (
	k8s.io/apiserver v0.18.19
	kube-authn.example/conformance/vector v0.0.0
)

require k8s.io/klog v1.0.0 // indirect

replace kube-authn.example/conformance/vector => ../vector

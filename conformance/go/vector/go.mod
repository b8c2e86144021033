module kube-authn.example/conformance/vector

go 1.24

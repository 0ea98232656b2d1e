// Command protoc-gen-restdoc is a buf/protoc plugin that writes the OpenAPI
// document of the REST interface from the protos, their rest.v1 options and
// the HTTP rules the gateway is generated from. See package restdoc.
package main

import (
	"flag"

	"google.golang.org/protobuf/compiler/protogen"

	"github.com/liveproctor/workspaces/tools/restdoc"
)

func main() {
	var flags flag.FlagSet
	var opts restdoc.Options
	flags.StringVar(&opts.HTTPRules, "http_rules", "", "the google.api.Service YAML holding the HTTP rules")
	flags.StringVar(&opts.Base, "base", "", "the YAML holding the document's parts no proto says (info, servers, security schemes, shared headers)")
	protogen.Options{ParamFunc: flags.Set}.Run(func(p *protogen.Plugin) error {
		return restdoc.Generate(p, opts)
	})
}

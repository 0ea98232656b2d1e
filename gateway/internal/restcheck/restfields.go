package restcheck

import (
	"strings"
	"sync"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/liveproctor/workspaces/pkg/restrules"
)

// restFields is a message's fields as the REST interface publishes them: by
// JSON name only, without those marked (rest.v1.field).hidden. Request
// bodies and query parameters may name nothing else.
type restFields struct {
	byJSONName map[string]protoreflect.FieldDescriptor
	// maxDots is the most dots in one JSON name (address.state has one),
	// which bounds the longest run of a query key one name can take.
	maxDots int
}

// restFieldTables caches a restFields per message descriptor, built on
// first use: descriptors are fixed, so each request pays one lookup.
var restFieldTables sync.Map // protoreflect.MessageDescriptor → *restFields

// restFieldsOf returns md's published fields.
func restFieldsOf(md protoreflect.MessageDescriptor) *restFields {
	if f, ok := restFieldTables.Load(md); ok {
		return f.(*restFields)
	}
	fields := md.Fields()
	f := &restFields{byJSONName: make(map[string]protoreflect.FieldDescriptor, fields.Len())}
	for i := range fields.Len() {
		fd := fields.Get(i)
		if !restrules.Published(fd) {
			continue
		}
		f.byJSONName[fd.JSONName()] = fd
		f.maxDots = max(f.maxDots, strings.Count(fd.JSONName(), "."))
	}
	stored, _ := restFieldTables.LoadOrStore(md, f)
	return stored.(*restFields)
}

// longestName finds the field named by the longest run of key's leading
// dot-separated segments. rest is what follows that run and its dot, and
// more says whether anything does: "address.state.include" gives the field
// address.state, rest "include" and more.
func (f *restFields) longestName(key string) (fd protoreflect.FieldDescriptor, rest string, more bool) {
	end, dots := len(key), 0
	for i := 0; i < len(key); i++ {
		if key[i] != '.' {
			continue
		}
		if dots == f.maxDots {
			end = i
			break
		}
		dots++
	}
	for {
		if fd := f.byJSONName[key[:end]]; fd != nil {
			if end == len(key) {
				return fd, "", false
			}
			return fd, key[end+1:], true
		}
		i := strings.LastIndexByte(key[:end], '.')
		if i < 0 {
			return nil, "", false
		}
		end = i
	}
}

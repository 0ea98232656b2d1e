package archmap

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Check holds the rows to the code under root, the repository's root, and
// returns one line per problem: a place that does not exist, or a name not
// declared in its row's places.
//
// A name is declared when its row's Go files (a file place is that file, a
// folder place the non-test .go files directly in it) hold:
//
//   - for `Name`: a function, type, variable or constant of that name, or a
//     method of that name on any type (a row lists `Loader.Get`, `Peek`, …);
//   - for `Type.Name`: a method of Type (its receiver's type, or Type's
//     interface), or a field of the struct Type;
//   - for `pkg.Name` (and `pkg.Type.Name`), where pkg is the package of one
//     of the row's places: the same, in the places of that package.
func Check(root string, rows []Row) []string {
	var problems []string
	for _, row := range rows {
		for _, why := range row.Unresolved {
			problems = append(problems, fmt.Sprintf("row %q: %s", row.Rule, why))
		}
		var decls []*declarations
		for _, place := range row.Places {
			found, err := load(root, place)
			if err != nil {
				problems = append(problems, fmt.Sprintf("row %q: %s: %v", row.Rule, place, err))
				continue
			}
			decls = append(decls, found...)
		}
		for _, name := range row.Names {
			if !declared(decls, name) {
				problems = append(problems, fmt.Sprintf("row %q: %s is not declared in %s",
					row.Rule, name, strings.Join(row.Places, ", ")))
			}
		}
	}
	return problems
}

// declarations are what one Go file declares at its top level.
type declarations struct {
	pkg      string
	topLevel map[string]bool
	methods  map[string]map[string]bool // by type: its methods, an interface's included
	fields   map[string]map[string]bool // by struct type
}

func add(by map[string]map[string]bool, typ, name string) {
	if by[typ] == nil {
		by[typ] = map[string]bool{}
	}
	by[typ][name] = true
}

// load parses the Go files of a place; a place that is no Go file (a proto,
// a document) only has to exist.
func load(root, place string) ([]*declarations, error) {
	matches, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(place)))
	if err != nil {
		return nil, err
	}
	if len(matches) == 0 {
		return nil, fs.ErrNotExist
	}
	var decls []*declarations
	for _, match := range matches {
		files, err := goFiles(match)
		if err != nil {
			return nil, err
		}
		for _, file := range files {
			d, err := parse(file)
			if err != nil {
				return nil, err
			}
			decls = append(decls, d)
		}
	}
	return decls, nil
}

func goFiles(place string) ([]string, error) {
	info, err := os.Stat(place)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		if filepath.Ext(place) != ".go" {
			return nil, nil
		}
		return []string{place}, nil
	}
	entries, err := os.ReadDir(place)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() && strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			files = append(files, filepath.Join(place, name))
		}
	}
	return files, nil
}

func parse(file string) (*declarations, error) {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	d := &declarations{pkg: f.Name.Name, topLevel: map[string]bool{}, methods: map[string]map[string]bool{}, fields: map[string]map[string]bool{}}
	for _, decl := range f.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			if decl.Recv == nil {
				d.topLevel[decl.Name.Name] = true
				continue
			}
			add(d.methods, receiverType(decl.Recv.List[0].Type), decl.Name.Name)
		case *ast.GenDecl:
			for _, spec := range decl.Specs {
				switch spec := spec.(type) {
				case *ast.TypeSpec:
					d.topLevel[spec.Name.Name] = true
					typeMembers(d, spec)
				case *ast.ValueSpec:
					for _, name := range spec.Names {
						d.topLevel[name.Name] = true
					}
				}
			}
		}
	}
	return d, nil
}

// receiverType is the name of a method's receiver type: T of T, *T, T[K]
// and *T[K, V].
func receiverType(expr ast.Expr) string {
	switch expr := expr.(type) {
	case *ast.StarExpr:
		return receiverType(expr.X)
	case *ast.IndexExpr:
		return receiverType(expr.X)
	case *ast.IndexListExpr:
		return receiverType(expr.X)
	case *ast.Ident:
		return expr.Name
	}
	return ""
}

// typeMembers records a struct's fields and an interface's methods.
func typeMembers(d *declarations, spec *ast.TypeSpec) {
	var list *ast.FieldList
	by := d.fields
	switch t := spec.Type.(type) {
	case *ast.StructType:
		list = t.Fields
	case *ast.InterfaceType:
		list, by = t.Methods, d.methods
	default:
		return
	}
	for _, field := range list.List {
		for _, name := range field.Names {
			add(by, spec.Name.Name, name.Name)
		}
	}
}

func declared(decls []*declarations, name string) bool {
	parts := strings.Split(name, ".")
	if len(parts) > 1 {
		var inPackage []*declarations
		for _, d := range decls {
			if d.pkg == parts[0] {
				inPackage = append(inPackage, d)
			}
		}
		if len(inPackage) > 0 {
			decls, parts = inPackage, parts[1:]
		}
	}
	for _, d := range decls {
		switch len(parts) {
		case 1:
			if d.topLevel[parts[0]] || anyMethod(d, parts[0]) {
				return true
			}
		case 2:
			if d.methods[parts[0]][parts[1]] || d.fields[parts[0]][parts[1]] {
				return true
			}
		}
	}
	return false
}

func anyMethod(d *declarations, name string) bool {
	for _, methods := range d.methods {
		if methods[name] {
			return true
		}
	}
	return false
}
